// The npm `ari-client` package ships no types. Its resources and operations are built at run time
// from the server's Swagger documents, so they are typed loosely: resource → operation → call.
declare module 'ari-client' {
  import type { EventEmitter } from 'node:events';

  /** One operation: takes its parameters as an object, resolves with the parsed response. */
  export type Operation = (params?: Record<string, unknown>) => Promise<any>;

  export interface Client extends EventEmitter {
    readonly [resource: string]: any;
    readonly asterisk: Record<string, Operation>;
    readonly applications: Record<string, Operation>;
    readonly deviceStates: Record<string, Operation>;
    /** Present when the server's resources.json lists a `system` resource. */
    readonly system?: Record<string, Operation>;
    /** Opens the event WebSocket for the given applications. */
    start(apps: string | string[], subscribeAll?: boolean): Promise<void>;
    /** Closes the event WebSocket (without reconnecting). */
    stop(): void;
    /** The client's event WebSocket (a `ws` socket), once started. */
    readonly _ws?: { close(): void; terminate(): void; readyState: number };
  }

  export function connect(url: string, user: string, password: string): Promise<Client>;

  const ari: { connect: typeof connect };
  export default ari;
}
