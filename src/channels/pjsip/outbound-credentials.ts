// The credentials of an `outbound_auth` list (auth objects by id), in the form the SIP stack's
// client digest takes; ids that name no auth are skipped (the configuration warned about them).
import type { DigestCredentials } from '../../sip/auth/digest-client.ts';
import type { PjsipConfig } from './config/index.ts';

export function outboundCredentials(config: PjsipConfig, authIds: readonly string[]): DigestCredentials[] {
  const credentials: DigestCredentials[] = [];
  for (const id of authIds) {
    const auth = config.auths.get(id);
    if (!auth) continue;
    credentials.push({
      username: auth.username,
      ...(auth.authType === 'md5' ? { md5Cred: auth.md5Cred } : { password: auth.password ?? '' }),
      ...(auth.realm ? { realm: auth.realm } : {}),
    });
  }
  return credentials;
}
