// SIP extensions named by option tags (RFC 3261 §8.1.1.9, §8.2.2.3, §19.2): what a request says it
// supports (Supported, compact `k`) and requires (Require), read from hostile input with bounds, and
// the check a UAS makes before anything else: a required extension it does not know gets 420 Bad
// Extension listing it in Unsupported.
import type { SipMessage } from './message.ts';

/** Reliable provisional responses, RFC 3262. */
export const TAG_100REL = '100rel';
/** Session timers, RFC 4028. */
export const TAG_TIMER = 'timer';
/** History-Info (RFC 7044): named in Supported of the INVITEs, 3xx and 181 Asterisk's res_pjsip_diversion sends. */
export const TAG_HISTINFO = 'histinfo';

/** Option tags read from one header of one message, at most; more are ignored. */
const MAX_TAGS = 32;
/** An option tag is a token (RFC 3261 §25.1); longer ones are not tags we could know. */
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]{1,64}$/;

/** The option tags of `header` (`supported`, `require`, `proxy-require`), lower-cased, each once. */
export function optionTags(message: SipMessage, header: 'supported' | 'require' | 'proxy-require'): string[] {
  const tags: string[] = [];
  for (const value of message.values(header)) {
    const tag = value.trim().toLowerCase();
    if (tag === '' || tags.includes(tag)) continue;
    // Something that is not a token is kept (shortened and stripped) so that a Require of it is still refused.
    tags.push(TOKEN.test(tag) ? tag : tag.replace(/[^A-Za-z0-9\-.!%*_+`'~]/g, '').slice(0, 64) || 'invalid');
    if (tags.length >= MAX_TAGS) break;
  }
  return tags;
}

/** Whether `message` lists `tag` in `header`. */
export function hasOptionTag(message: SipMessage, header: 'supported' | 'require', tag: string): boolean {
  return optionTags(message, header).includes(tag);
}

/**
 * The option tags a request requires (Require; Proxy-Require is for proxies and ignored by a UAS) that
 * are not in `understood`: answer 420 Bad Extension with them in Unsupported when any are left.
 */
export function unsupportedRequirements(request: SipMessage, understood: ReadonlySet<string>): string[] {
  return optionTags(request, 'require').filter((tag) => !understood.has(tag));
}
