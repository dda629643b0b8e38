// Where Dial()'s answered callee goes instead of simply ending (app_dial's
// setup_peer_after_bridge_goto and OPT_GOTO, over bridge_after.c's after-bridge goto):
// e — the callee runs the `h` extension of the caller's context when its call ends;
// F — a callee still up when the caller hung up goes on at the caller's next priority,
// F(context^exten^priority) there instead; G(context^exten^priority) — at the answer both go into
// the dialplan, the caller there and the callee at the next priority, and they are not bridged.
import type { Channel, DialplanLocation } from '../../core/channels/channel.ts';
import type { PbxServices } from '../application-services.ts';
import { resolveGoto } from './goto.ts';

type Place = Pick<DialplanLocation, 'context' | 'exten' | 'priority'>;

/**
 * F's goto for a callee whose caller hung up: undefined without F (the callee is hung up). `at`
 * is where the caller's Dial() runs, which F's place is relative to, as Asterisk's.
 */
export function calleeGoesOn(options: ReadonlyMap<string, string>, at: Place, services: PbxServices): ((peer: Channel) => boolean) | undefined {
  // e takes precedence over F, as app_dial checks it first.
  if (!options.has('F') || options.has('e') || !services.startDialplan) return undefined;
  const argument = options.get('F') ?? '';
  return (peer) => {
    const target: Place | { error: string } =
      argument === ''
        ? services.dialplan().find(at.context, at.exten, at.priority + 1, peer.caller.number || undefined)
          ? { context: at.context, exten: at.exten, priority: at.priority + 1 }
          : { error: `${at.context},${at.exten},${at.priority + 1} does not exist` }
        : relativeTo(peer, at, argument, services);
    if ('error' in target) {
      services.log.warn({ channel: peer.name }, `Dial: the callee cannot go on (F): ${target.error}`);
      return false;
    }
    peer.setLocation(target);
    services.startDialplan!(peer);
    return true;
  };
}

/** A `context^exten^priority` goto resolved from `at` (the part left out is `at`'s), as ast_parseable_goto after the explicit goto there. */
function relativeTo(peer: Channel, at: Place, argument: string, services: PbxServices): Place | { error: string } {
  const saved = peer.location;
  peer.setLocation(at);
  const target = resolveGoto(peer, services, argument.replaceAll('^', ','));
  peer.setLocation({ context: saved.context, exten: saved.exten, priority: saved.priority });
  return target;
}

/** e: the answered callee runs the `h` extension of the caller's context when its call ends. */
export function armCalleeHangupExtension(options: ReadonlyMap<string, string>, caller: Channel, peer: Channel, services: PbxServices): void {
  if (options.has('e')) services.hangupExtensionIn?.(peer, caller.location.context);
}

/**
 * G(context^exten^priority) at the answer: the caller goes there (the outcome is its Dial()'s) and
 * the callee into the dialplan at the priority after it; they are not bridged. A place that does
 * not exist is named in the log: the callee is hung up and the caller goes on at its next priority.
 */
export function sendBothTo(caller: Channel, peer: Channel, argument: string, services: PbxServices): 'jump' | 'next' {
  const target = resolveGoto(caller, services, argument.replaceAll('^', ','));
  if ('error' in target || !services.startDialplan) {
    services.log.warn({ channel: caller.name }, `Dial: cannot send the call to G(${argument}): ${'error' in target ? target.error : 'no dialplan to run the callee'}`);
    return 'next';
  }
  caller.setLocation(target);
  peer.setLocation({ context: target.context, exten: target.exten, priority: target.priority + 1 });
  services.startDialplan(peer);
  return 'jump';
}
