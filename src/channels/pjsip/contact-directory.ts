// Registered contacts shared beyond this server. A cluster member (docs/cluster.md) fills the hook
// so that `Dial(PJSIP/alice)` here reaches a phone that registered through another member; the
// technology itself knows nothing of NATS: it tells the directory what its registrar bound and
// unbound, and asks it, when dialling, for the contacts that other servers hold.
import type { Binding, BindingChange, BindingSource } from '../../sip/registrar.ts';

/** A contact registered through another server, as the directory knows it. */
export interface SharedContact {
  readonly aor: string;
  /** Where requests go (the stored URI: the source address with rewrite_contact). */
  readonly uri: string;
  /** Absolute expiry, milliseconds since the epoch. */
  readonly expiresAt: number;
  /** How the REGISTER came: only `udp` can be reached from another server (a TCP, TLS or WebSocket phone is reached over its own connection). */
  readonly transport: BindingSource['transport'];
  /** The server (cluster member) that took the REGISTER and holds the binding. */
  readonly holder: string;
  /**
   * A TCP, TLS or WebSocket contact: the address the holder shows the phone on its connection
   * (Via and Contact of a dialog relayed through it, flow-relay.ts). Without it the contact is
   * not reached from another server.
   */
  readonly flow?: { readonly host: string; readonly port: number };
}

export interface ContactDirectory {
  /** A change of this server's registrar: added and refreshed bindings are shared, removed and expired ones withdrawn. */
  bindingChanged(change: BindingChange): void;
  /** Every live binding of this server's registrar, shared at once (the directory was attached after the registrar ran). */
  share(bindings: readonly Binding[]): void;
  /** The unexpired contacts of an address of record registered through other servers (never this one's). */
  contactsOf(aor: string): readonly SharedContact[];
  /**
   * Told when other servers' contacts change (one came, went or expired), so that an endpoint
   * registered through another server is `online` here too; returns the unsubscription.
   */
  onChange?(listener: () => void): () => void;
}

/** The contacts of these AORs registered through other servers, as `pjsip show contacts` lists them: not qualified here. */
export function contactsElsewhere(directory: ContactDirectory, aors: readonly string[], now: number) {
  return aors.flatMap((aor) =>
    directory.contactsOf(aor).map((contact) => ({
      aor,
      uri: contact.uri,
      status: 'NonQual',
      roundtrip_usec: 0,
      expires_in: Math.max(0, Math.round((contact.expiresAt - now) / 1000)),
      user_agent: '',
      source: `${contact.transport} via cluster member ${contact.holder}`,
    })),
  );
}
