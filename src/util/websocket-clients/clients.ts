// The configured `websocket_clients` (Asterisk's websocket_client.conf objects), looked up by name.
import type { WebSocketClientConfig } from './client-config.ts';

/** The configured clients, by name. */
export class WebSocketClients {
  readonly #byName: ReadonlyMap<string, WebSocketClientConfig>;

  constructor(clients: readonly WebSocketClientConfig[]) {
    this.#byName = new Map(clients.map((client) => [client.name, client]));
  }

  get(name: string): WebSocketClientConfig | undefined {
    return this.#byName.get(name);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }
}
