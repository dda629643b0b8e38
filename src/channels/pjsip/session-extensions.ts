// The SIP extensions of an endpoint's sessions (its `100rel` and `timers`): which option tags it
// names in Supported, which a request may require of it, and the refusals an INVITE gets before a
// channel exists (420 Bad Extension, 421 Extension Required, 422 Session Interval Too Small), as
// chan_pjsip (pjsip's invite session) refuses them.
import { TAG_100REL, TAG_TIMER, unsupportedRequirements } from '../../sip/extensions.ts';
import type { SipRequest } from '../../sip/message.ts';
import { uasReliability, type ReliableProvisionalMode } from '../../sip/reliable-provisional.ts';
import { uasSessionTimer, type SessionTimerSettings } from '../../sip/session-timer.ts';

/** The endpoint options this file reads (a PjsipEndpoint has them). */
export interface SessionExtensionOptions {
  readonly reliableProvisionals: ReliableProvisionalMode;
  readonly sessionTimers: SessionTimerSettings;
}

/** Supported out of any endpoint's context (OPTIONS answers): every extension the stack does. */
export const SUPPORTED_ALL = `${TAG_100REL}, ${TAG_TIMER}`;

/** The option tags an endpoint's sessions understand: 100rel and timer unless turned off. */
export function understoodTags(options: SessionExtensionOptions): Set<string> {
  const tags = new Set<string>();
  if (options.reliableProvisionals !== 'no') tags.add(TAG_100REL);
  if (options.sessionTimers.mode !== 'no') tags.add(TAG_TIMER);
  return tags;
}

/** The Supported header value of an endpoint's INVITEs and responses; undefined when it supports nothing. */
export function supportedValue(options: SessionExtensionOptions): string | undefined {
  const tags = [...understoodTags(options)];
  return tags.length > 0 ? tags.join(', ') : undefined;
}

/**
 * `headers` with `tag` named in their Supported line, a Supported line added when there is none
 * (res_pjsip_diversion's add_supported): a tag already there is not named twice.
 */
export function withSupportedTag(headers: ReadonlyArray<readonly [string, string]>, tag: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let named = false;
  for (const [name, value] of headers) {
    if (!named && name.toLowerCase() === 'supported') {
      named = true;
      const tags = value.split(',').map((item) => item.trim().toLowerCase());
      out.push([name, tags.includes(tag) ? value : `${value}, ${tag}`]);
    } else out.push([name, value]);
  }
  if (!named) out.push(['Supported', tag]);
  return out;
}

export interface InviteRefusal {
  readonly status: 420 | 421 | 422;
  readonly headers: Array<[string, string]>;
}

/** Why an INVITE (out of a dialog) must be refused for the extensions it requires or lacks; undefined: it may go on. */
export function refuseInvite(request: SipRequest, options: SessionExtensionOptions): InviteRefusal | undefined {
  const unsupported = unsupportedRequirements(request, understoodTags(options));
  if (unsupported.length > 0) return { status: 420, headers: [['Unsupported', unsupported.join(', ')]] };
  if (uasReliability(request, options.reliableProvisionals).kind === 'extension-required') return { status: 421, headers: [['Require', TAG_100REL]] };
  const timer = uasSessionTimer(request, options.sessionTimers);
  if (timer.kind === 'extension-required') return { status: 421, headers: [['Require', TAG_TIMER]] };
  if (timer.kind === 'too-small') return { status: 422, headers: [['Min-SE', String(timer.minSe)]] };
  return undefined;
}
