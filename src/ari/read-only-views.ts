// What a read-only ARI user must not see. A media WebSocket's connection id lets whoever holds it
// carry a call's audio both ways; `/media/` now asks for a read-write user as well, but the id stays
// out of everything a read-only user reads (REST answers, events, REST over the events WebSocket),
// so a leak of read-only credentials does not hand out the id for the day the rule is loosened.

/** Channel variables whose values are credentials. */
export const SECRET_CHANNEL_VARIABLES: ReadonlySet<string> = new Set(['MEDIA_WEBSOCKET_CONNECTION_ID']);

const REDACTED = '';

/** Whether a serialised message may name a secret variable (cheap test before parsing). */
export function mayNameSecret(text: string): boolean {
  for (const name of SECRET_CHANNEL_VARIABLES) if (text.includes(name)) return true;
  return false;
}

/**
 * A copy of `value` with secret variables blanked: in every `channelvars` object, and as the
 * value of a ChannelVarset event about one. Depth-bounded: answers and events are shallow.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) {
    let copy = redactSecrets(item, depth + 1);
    if (key === 'channelvars' && copy !== null && typeof copy === 'object' && !Array.isArray(copy)) copy = blankSecretKeys(copy as Record<string, unknown>);
    Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  if (source.type === 'ChannelVarset' && typeof source.variable === 'string' && SECRET_CHANNEL_VARIABLES.has(source.variable)) out.value = REDACTED;
  return out;
}

function blankSecretKeys(vars: Record<string, unknown>): Record<string, unknown> {
  for (const name of SECRET_CHANNEL_VARIABLES) if (Object.hasOwn(vars, name)) vars[name] = REDACTED;
  return vars;
}

/** `text` with every secret value the channel holds blanked (a read-only user reading variables or functions). */
export function withoutSecretValues(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret !== '' && out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
