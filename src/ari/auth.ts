// ARI authentication: HTTP Basic first, then `api_key=user:pass`, checked before routing.
import type { IncomingHttpHeaders } from 'node:http';
import { verifyPassword, type AriUser } from '../config/config.ts';

export type AuthResult =
  | { readonly kind: 'ok'; readonly user: AriUser }
  | { readonly kind: 'unauthorized' }
  | { readonly kind: 'read-only' };

function credentialsFromBasic(header: string | undefined): [string, string] | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // A header without a colon is not usable, so api_key gets its chance (as Asterisk does).
  if (colon < 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

function credentialsFromApiKey(apiKey: string | null): [string, string] | undefined {
  if (!apiKey) return undefined;
  const colon = apiKey.indexOf(':');
  if (colon < 0 || colon === apiKey.length - 1) return undefined;
  return [apiKey.slice(0, colon), apiKey.slice(colon + 1)];
}

const MAX_REMEMBERED_HEADERS = 64;

export class Authenticator {
  private readonly users: ReadonlyMap<string, AriUser>;
  private readonly verifiedHeaders = new Map<string, AriUser>();

  constructor(users: readonly AriUser[]) {
    this.users = new Map(users.map((user) => [user.name, user]));
  }

  authenticate(headers: IncomingHttpHeaders, query: URLSearchParams, method: string): AuthResult {
    const header = headers.authorization;
    // A header already verified for a plain-password user maps straight to that user: the password
    // is held in plain text in the configuration anyway, so remembering its header reveals nothing new.
    const known = header === undefined ? undefined : this.verifiedHeaders.get(header);
    if (known) return this.authorize(known, method);
    const credentials = credentialsFromBasic(header) ?? credentialsFromApiKey(query.get('api_key'));
    if (!credentials) return { kind: 'unauthorized' };
    const user = this.check(credentials[0], credentials[1]);
    if (!user) return { kind: 'unauthorized' };
    if (header !== undefined && user.passwordFormat === 'plain' && credentialsFromBasic(header)) {
      if (this.verifiedHeaders.size >= MAX_REMEMBERED_HEADERS) this.verifiedHeaders.clear();
      this.verifiedHeaders.set(header, user);
    }
    return this.authorize(user, method);
  }

  private authorize(user: AriUser, method: string): AuthResult {
    if (user.readOnly && method !== 'GET' && method !== 'OPTIONS') return { kind: 'read-only' };
    return { kind: 'ok', user };
  }

  private check(name: string, password: string): AriUser | undefined {
    const user = this.users.get(name);
    return user && verifyPassword(user, password) ? user : undefined;
  }
}
