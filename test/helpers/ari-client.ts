// What the npm `ari-client` typings (@types/ari-client, written for Asterisk's ARI) do not
// describe, but the client builds at run time from Patchbay's Swagger documents or keeps inside:
// the `system` resource (ARI 23), operations added after the typings (setChannelVars and
// getChannelVars), and the event WebSocket the tests close without the client's reconnect.
import type { Asterisk, Client } from 'ari-client';

export interface ClientInternals {
  /** Present when the server's resources.json lists a `system` resource (it mirrors asterisk's operations). */
  readonly system?: Pick<Asterisk, 'ping' | 'getInfo'>;
  /** The client's event WebSocket (a `ws` socket), once started. */
  readonly _ws?: { close(): void; terminate(): void; readyState: number };
  readonly channels: Client['channels'] & {
    setChannelVars(params: { channelId: string; variables: Record<string, string> }): Promise<void>;
    getChannelVars(params: { channelId: string; variables: string }): Promise<Record<string, string>>;
  };
  /** claimChannel (ARI 22.10/23.4, StasisBroadcast) came after the typings. */
  readonly events: Client['events'] & {
    claimChannel(params: { channelId: string; application: string }): Promise<void>;
  };
}

/** The same client, seen with what its typings leave out. */
export function internals(client: Client): ClientInternals {
  return client as unknown as ClientInternals;
}

/** A resource of the client by name (they are built from the Swagger documents). */
export function resourceOf(client: Client, name: string): unknown {
  return (client as unknown as Record<string, unknown>)[name];
}
