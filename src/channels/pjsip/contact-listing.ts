// `pjsip show contacts` (and the admin API's contact list): every AOR's contacts with their qualify
// status, from three places — the static `contact=` of the aor sections, the registrar's bindings,
// and (in a cluster) the bindings other servers hold. A read-only view; technology.ts owns the parts.
import type { Registrar } from '../../sip/registrar.ts';
import type { PjsipConfig } from './config/index.ts';
import { contactsElsewhere, type ContactDirectory } from './contact-directory.ts';
import type { ContactQualifier } from './qualify.ts';

/** One row of the listing, in the field names `pjsip show contacts` prints. */
export interface ContactRow {
  aor: string;
  uri: string;
  status: string;
  roundtrip_usec: number;
  expires_in: number;
  user_agent: string;
  source: string;
}

export function listContacts(
  config: PjsipConfig,
  registrar: Registrar,
  qualifier: Pick<ContactQualifier, 'state'> | undefined,
  directory: ContactDirectory | undefined,
  now = Date.now(),
): ContactRow[] {
  const configured = [...config.aors.values()].flatMap((aor) =>
    aor.contacts.map((uri) => {
      const qualify = qualifier?.state(aor.id, uri);
      return { aor: aor.id, uri, status: qualify?.status ?? 'NonQual', roundtrip_usec: qualify?.roundtripUsec ?? 0, expires_in: 0, user_agent: '', source: 'static' };
    }),
  );
  const registered = registrar.aors().flatMap((aor) =>
    registrar.lookup(aor).map((binding) => {
      const qualify = qualifier?.state(aor, binding.uri);
      return {
        aor,
        uri: binding.uri,
        status: qualify?.status ?? 'NonQual',
        roundtrip_usec: qualify?.roundtripUsec ?? 0,
        expires_in: Math.max(0, Math.round((binding.expiresAt - now) / 1000)),
        user_agent: binding.userAgent,
        source: `${binding.source.transport} ${binding.source.address}:${binding.source.port}`,
      };
    }),
  );
  return configured.concat(registered, directory ? contactsElsewhere(directory, [...config.aors.keys()], now) : []);
}
