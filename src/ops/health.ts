// GET /health for load balancers and orchestrators: 200 while serving, 503 once stopping. No
// secrets: status, uptime, version and counts only.
import type { Core } from '../control/core.ts';

export interface HealthAnswer {
  readonly status: number;
  readonly body: { status: 'ok' | 'draining' | 'stopping'; uptime_seconds: number; channels: number; bridges: number };
}

export class Health {
  #stopping = false;
  #draining = false;
  readonly #startedAt = process.hrtime.bigint();

  constructor(private readonly core: Core) {}

  /** From now on /health answers 503, so a load balancer sends new calls elsewhere. */
  markStopping(): void {
    this.#stopping = true;
  }

  /** While draining (graceful stop) /health answers 503 "draining": no new calls are taken. */
  markDraining(on: boolean): void {
    this.#draining = on;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  check(): HealthAnswer {
    const body = {
      status: this.#stopping ? ('stopping' as const) : this.#draining ? ('draining' as const) : ('ok' as const),
      uptime_seconds: Math.floor(Number(process.hrtime.bigint() - this.#startedAt) / 1e9),
      channels: this.core.channels.size,
      bridges: this.core.bridges.size,
    };
    return { status: this.#stopping || this.#draining ? 503 : 200, body };
  }
}
