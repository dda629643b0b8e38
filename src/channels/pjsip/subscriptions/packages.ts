// The event packages Patchbay serves to SUBSCRIBE, as Asterisk's res_pjsip_exten_state and
// res_pjsip_mwi serve them:
// - `dialog` (application/dialog-info+xml) and `presence` (application/pidf+xml): the state of an
//   extension's hint in the endpoint's subscribe_context (else its context), the request's user
//   being the extension; 404 when it has no hint.
// - `message-summary` (application/simple-message-summary): the counts of the mailboxes of an
//   AOR (`mailboxes=`), the request's user naming the AOR or its voicemail_extension (no user:
//   every AOR of the endpoint); 404 for an unknown AOR or one without mailboxes.
// Each resolved resource renders its NOTIFY body and names the changes that concern it.
import type { TechnologyContext } from '../../../core/channels/technology.ts';
import type { ExtensionState } from '../../../core/extension-state-types.ts';
import { hintDevices } from '../../../core/extension-states.ts';
import { DIALOG_INFO_TYPE, MESSAGE_SUMMARY_TYPE, PIDF_TYPE, dialogInfoXml, messageSummaryBody, pidfXml, type DialogInfoState } from '../../../sip/event-bodies.ts';
import { formatUri } from '../../../sip/uri.ts';
import { plainSipUri } from '../addresses.ts';
import type { PjsipAor, PjsipConfig, PjsipEndpoint } from '../config/index.ts';

/** What a body is rendered for: the resource's URI and the dialog-info version of this NOTIFY. */
export interface RenderContext {
  readonly entity: string;
  readonly version: number;
}

export interface WatchedResource {
  /** The changes that concern it: `exten:<exten>`, `mailbox:<name>`. */
  readonly keys: readonly string[];
  /** The NOTIFY body now, and the state it shows (a NOTIFY on change goes only when it differs). */
  render(context: RenderContext): { readonly body: string; readonly state: string };
  /** The mailboxes it reports (message-summary), to tell solicited MWI from unsolicited. */
  readonly mailboxes?: readonly string[];
}

/** A refusal of the SUBSCRIBE: its status and reason phrase. */
export interface Refused {
  readonly status: number;
  readonly reason?: string;
}

/** What a package's resolve() is given about the subscription being made. */
export interface ResolveRequest {
  readonly endpoint: PjsipEndpoint;
  /** The request's user, user options (`;…`) cut off; '' when none. */
  readonly resource: string;
  /** The subscriber's URI (From), written in PIDF as the contact. */
  readonly subscriber: string;
  /** Our host, for URIs (Message-Account). */
  readonly host: string;
}

export interface EventPackage {
  readonly name: string;
  readonly contentType: string;
  resolve(request: ResolveRequest): WatchedResource | Refused;
}

/**
 * Changes are told with the context that holds the hint, which may be one the subscribe_context
 * includes: so an extension's subscribers in every context hear of a change of its name, and each
 * NOTIFYs only if its own state changed.
 */
export const extenKey = (exten: string): string => `exten:${exten}`;
export const mailboxKey = (name: string): string => `mailbox:${name}`;

/** How an extension state is shown, as Asterisk's ast_sip_presence_exten_state_to_str shows it. */
interface ShownState {
  readonly dialog: DialogInfoState;
  readonly ringing?: boolean;
  readonly onHold?: boolean;
  readonly open: boolean;
  readonly note: string;
}

export function shownState(state: ExtensionState, earlyInuseRinging = false): ShownState {
  switch (state) {
    case 'RINGING':
      return { dialog: 'early', ringing: true, open: true, note: 'Ringing' };
    case 'RINGINUSE':
      // In use and ringing again: confirmed, unless the endpoint's notify_early_inuse_ringing asks for early.
      return earlyInuseRinging ? { dialog: 'early', ringing: true, open: true, note: 'Ringing' } : { dialog: 'confirmed', open: true, note: 'Ringing' };
    case 'INUSE':
    case 'BUSY':
      return { dialog: 'confirmed', open: true, note: 'On the phone' };
    case 'ONHOLD':
    case 'HOLDINUSE':
      return { dialog: 'confirmed', onHold: true, open: true, note: 'On hold' };
    case 'UNAVAILABLE':
      return { dialog: 'terminated', open: false, note: 'Unavailable' };
    default:
      return { dialog: 'terminated', open: true, note: 'Ready' };
  }
}

type Context = () => TechnologyContext | undefined;

/** Resolves the hinted extension of `dialog` and `presence` subscriptions. */
function hinted(context: Context, request: ResolveRequest): { context: string; exten: string } | Refused {
  const core = context();
  if (!core) return { status: 503 };
  const where = request.endpoint.subscribeContext ?? request.endpoint.context;
  if (request.resource === '' || core.extensionStates.hint(where, request.resource) === undefined) return { status: 404 };
  return { context: where, exten: request.resource };
}

export function dialogPackage(context: Context): EventPackage {
  return {
    name: 'dialog',
    contentType: DIALOG_INFO_TYPE,
    resolve(request) {
      const found = hinted(context, request);
      if ('status' in found) return found;
      return {
        keys: [extenKey(found.exten)],
        render({ entity, version }) {
          const state = context()?.extensionStates.state(found.context, found.exten) ?? 'UNKNOWN';
          const shown = shownState(state, request.endpoint.notifyEarlyInuseRinging);
          const caller = shown.dialog === 'early' ? ringingCaller(context(), found.context, found.exten) : undefined;
          const remote = caller ? { uri: formatUri(plainSipUri(caller.number, request.host)), ...(caller.name ? { display: caller.name } : {}) } : undefined;
          // The caller is part of the state shown: a second call ringing in its place is a change.
          const shownKey = caller ? `${state}\u0000${caller.number}\u0000${caller.name}` : state;
          return { state: shownKey, body: dialogInfoXml({ entity, version, dialogId: found.exten, state: shown.dialog, ringing: shown.ringing, onHold: shown.onHold, ...(remote ? { remote } : {}) }) };
        },
      };
    },
  };
}

/**
 * Who is calling the ringing extension, as res_pjsip_dialog_info_body_generator finds it: the
 * first ringing channel of the hint's devices (by their endpoint), its connected line (the party
 * it is connected to), else its caller id; undefined when none rings or it carries no number.
 */
function ringingCaller(core: TechnologyContext | undefined, context: string, exten: string): { name: string; number: string } | undefined {
  const hint = core?.extensionStates.hint(context, exten);
  if (!core || hint === undefined) return undefined;
  for (const device of hintDevices(hint)) {
    const slash = device.indexOf('/');
    if (slash <= 0) continue;
    for (const id of core.endpoints.channelIds(device.slice(0, slash), device.slice(slash + 1))) {
      const channel = core.channels.get(id);
      if (channel?.state !== 'Ringing') continue;
      const party = channel.connected.number ? channel.connected : channel.caller;
      return party.number ? { name: party.name, number: party.number } : undefined;
    }
  }
  return undefined;
}

export function presencePackage(context: Context): EventPackage {
  return {
    name: 'presence',
    contentType: PIDF_TYPE,
    resolve(request) {
      const found = hinted(context, request);
      if ('status' in found) return found;
      return {
        keys: [extenKey(found.exten)],
        render({ entity }) {
          const state = context()?.extensionStates.state(found.context, found.exten) ?? 'UNKNOWN';
          const shown = shownState(state);
          return { state, body: pidfXml({ entity, tupleId: found.exten, open: shown.open, note: shown.note, contact: request.subscriber }) };
        },
      };
    },
  };
}

/** The AOR a message-summary SUBSCRIBE names: by name, else the endpoint's AOR whose voicemail_extension it is. */
function aorOfResource(config: PjsipConfig, endpoint: PjsipEndpoint, resource: string): PjsipAor | undefined {
  const direct = config.aors.get(resource);
  if (direct) return direct;
  for (const id of endpoint.aors) {
    const aor = config.aors.get(id);
    if (aor?.voicemailExtension !== undefined && aor.voicemailExtension.toLowerCase() === resource.toLowerCase()) return aor;
  }
  return undefined;
}

export interface MwiPackageOptions {
  readonly context: Context;
  readonly config: () => PjsipConfig;
  /**
   * Whether the endpoint gets unsolicited MWI for this mailbox; a SUBSCRIBE for it is then
   * refused (500) unless mwi_subscribe_replaces_unsolicited, as res_pjsip_mwi refuses it.
   */
  readonly unsolicited: (endpoint: PjsipEndpoint, mailbox: string) => boolean;
}

export function messageSummaryPackage(options: MwiPackageOptions): EventPackage {
  return {
    name: 'message-summary',
    contentType: MESSAGE_SUMMARY_TYPE,
    resolve(request) {
      const { endpoint, resource } = request;
      const config = options.config();
      let aors: PjsipAor[];
      if (resource === '') {
        aors = endpoint.aors.map((id) => config.aors.get(id)).filter((aor) => aor !== undefined);
      } else {
        const aor = aorOfResource(config, endpoint, resource);
        if (!aor || aor.mailboxes.length === 0) return { status: 404 };
        aors = [aor];
      }
      const mailboxes = [...new Set(aors.flatMap((aor) => aor.mailboxes))];
      if (!endpoint.mwiSubscribeReplacesUnsolicited && mailboxes.some((mailbox) => options.unsolicited(endpoint, mailbox))) {
        return { status: 500, reason: 'Server Internal Error' };
      }
      const extension = (aors.length === 1 ? aors[0].voicemailExtension : undefined) ?? config.global.defaultVoicemailExtension;
      const account = extension ? formatUri(plainSipUri(extension, request.host)) : undefined;
      return {
        keys: mailboxes.map(mailboxKey),
        mailboxes,
        render() {
          const counts = sumMailboxes(options.context(), mailboxes);
          return { state: `${counts.newMessages}/${counts.oldMessages}`, body: messageSummaryBody({ ...counts, ...(account ? { account } : {}) }) };
        },
      };
    },
  };
}

/** The new and old messages of the mailboxes together (an unknown mailbox counts nothing). */
export function sumMailboxes(core: TechnologyContext | undefined, mailboxes: readonly string[]): { newMessages: number; oldMessages: number } {
  let newMessages = 0;
  let oldMessages = 0;
  for (const name of mailboxes) {
    const counts = core?.mailboxes.get(name);
    if (!counts) continue;
    newMessages += counts.new_messages;
    oldMessages += counts.old_messages;
  }
  return { newMessages, oldMessages };
}
