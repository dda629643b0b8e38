// GET /health for load balancers and orchestrators: 200 while serving, 503 once stopping. No
// secrets: status, uptime, version and counts only.
import type { Core } from '../control/core.ts';

export interface HealthAnswer {
  readonly status: number;
  readonly body: { status: 'ok' | 'degraded' | 'draining' | 'stopping'; uptime_seconds: number; channels: number; bridges: number; reasons?: string[] };
}

/**
 * What is running without one of its parts (SIP could not listen on its default port): one line
 * each. Degraded answers 200 — ARI still serves — but says so, for monitoring rather than load balancing.
 */
export type Degradations = () => readonly string[];

export class Health {
  #stopping = false;
  #draining = false;
  readonly #startedAt = process.hrtime.bigint();

  constructor(
    private readonly core: Core,
    private readonly degradations: Degradations = () => [],
  ) {}

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
    const reasons = this.degradations();
    const body = {
      status: this.#stopping ? ('stopping' as const) : this.#draining ? ('draining' as const) : reasons.length > 0 ? ('degraded' as const) : ('ok' as const),
      uptime_seconds: Math.floor(Number(process.hrtime.bigint() - this.#startedAt) / 1e9),
      channels: this.core.channels.size,
      bridges: this.core.bridges.size,
      ...(reasons.length > 0 ? { reasons: [...reasons] } : {}),
    };
    return { status: this.#stopping || this.#draining ? 503 : 200, body };
  }
}
