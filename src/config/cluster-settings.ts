// The `cluster` settings (docs/cluster.md): a node joins a Patchbay cluster on NATS JetStream when
// `nats_url` is set; without it nothing of the cluster is loaded.
import { isIP } from 'node:net';
import { boolean, filePath, integer, oneOf, section, string } from './schema.ts';
import { noControl } from './value-checks.ts';

/** A NATS subject token: no dots, wildcards or white space, so it can name a node or a cluster. */
const TOKEN_RE = /^[A-Za-z0-9_-]{1,64}$/;

function checkNatsUrls(value: string): string | null {
  if (value === '') return null;
  for (const part of value.split(',')) {
    const url = part.trim();
    if (!/^(nats|tls):\/\/[^\s/]+(:\d{1,5})?\/?$/.test(url) && !/^[^\s/:]+(:\d{1,5})?$/.test(url)) {
      return `must be nats://host:port (or tls://, or host:port), comma-separated for several, got '${url}'`;
    }
  }
  return null;
}

export const CLUSTER_SETTINGS = section({
  nats_url: string({ default: '', docDefault: 'none (no cluster)', env: 'PATCHBAY_CLUSTER_NATS_URL', doc: 'NATS server(s) with JetStream this node joins a cluster through: `nats://host:4222`, comma-separated for several; empty: a single server, nothing of NATS is loaded', check: checkNatsUrls }),
  name: string({ default: 'patchbay', doc: 'Cluster name: the first token of every subject, stream and bucket, so several clusters can share one NATS (1–64 letters, digits, `_`, `-`)', check: (s) => (TOKEN_RE.test(s) ? null : `must be 1–64 letters, digits, _ or -, got '${s}'`) }),
  node_id: string({ default: '', docDefault: 'the `server_id`', doc: 'This node\'s name in the cluster (1–64 letters, digits, `_`, `-`); the default is the server id with `:` as `-`. Unique per node', check: (s) => (s === '' || TOKEN_RE.test(s) ? null : `must be 1–64 letters, digits, _ or -, got '${s}'`) }),
  failure_seconds: integer({ default: 5, min: 2, max: 300, doc: 'A member whose heartbeat (one a second) is missing this long is dead: the survivors end its channels (ChannelDestroyed, cause 38)' }),
  ari_url: string({ default: '', docDefault: 'the HTTP address the server listens on', doc: 'The ARI address announced to the other members (informative: `patchbay cluster status`)', check: noControl }),
  user: string({ default: '', docDefault: 'none', doc: 'NATS user (with `password`)', check: noControl }),
  password: string({ default: '', docDefault: 'none', doc: 'NATS password', check: noControl }),
  token: string({ default: '', docDefault: 'none', doc: 'NATS authentication token (instead of user and password)', check: noControl }),
  tls_ca_file: filePath({ default: null, docDefault: 'the system CAs', doc: 'PEM file of the CAs that sign the NATS server certificate' }),
  tls_cert_file: filePath({ default: null, docDefault: 'none', doc: 'PEM client certificate for NATS (with `tls_key_file`)' }),
  tls_key_file: filePath({ default: null, docDefault: 'none', doc: 'PEM private key of `tls_cert_file`' }),
  placement: oneOf({ values: ['least_loaded', 'round_robin'] as const, default: 'least_loaded', doc: 'Where a channel this member is asked to make (originate/create without an id or `cluster_node`) goes: the live member with fewest channels by its last heartbeat (this one on a tie), or each live member in turn' }),
  place_on_self: boolean({ default: true, doc: 'Whether channels this member places may land on itself; `false` makes it an ARI front whose new channels live on the other members (placement answers 503 when no other member is live)' }),
  media_address: string({ default: '', docDefault: 'the address SIP binds (`sip.bind`, else `http.bind`; a wildcard: the first non-internal IPv4)', doc: 'The IP address a cross-member bridge\'s media leg binds its RTP port on and the other member sends to (docs/cluster.md, "A bridge across members")', check: (s) => (s === '' || isIP(s) !== 0 ? null : `must be an IP address, got '${s.slice(0, 64)}'`) }),
  max_media_legs: integer({ default: 200, min: 0, max: 100_000, doc: 'Cross-member bridge media legs this member holds at once (each takes one RTP port from `sip.rtp_port_start`..`rtp_port_end`); past it adding a channel of another member to a bridge answers 503; `0`: refused (501)' }),
  max_relayed_dialogs: integer({ default: 500, min: 0, max: 100_000, doc: 'Calls to phones registered over TCP, TLS or WebSocket through another member that run over that member\'s connection (docs/cluster.md, "Registrations"): at most this many dialogs this member relays for each other member, and runs through others in all; past it the call is refused as unreachable; `0`: such phones are called only from the member holding their connection' }),
  request_timeout_ms: integer({ default: 5000, min: 100, max: 60_000, doc: 'How long a request forwarded to the member that owns its resource may take before it answers 504' }),
  drain_timeout_seconds: integer({ default: 0, min: 0, max: 86_400, docDefault: '0 (wait for the last call)', doc: 'A graceful stop (`patchbay stop --gracefully`, SIGUSR1) of this member stops it after this long even while calls are up (they are ended, as by `patchbay stop`); 0: it waits for the last call' }),
});
