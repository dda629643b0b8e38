// CHANNEL(pjsip,item): chan_pjsip's signalling items that apply to Patchbay's calls. Before the
// dialog exists (an unanswered call) the tags and URIs come from the INVITE.
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest } from '../../sip/message.ts';
import { formatUri, type Uri } from '../../sip/uri.ts';

/** What a call knows of its signalling. */
export interface CallSignalling {
  readonly callId: string;
  readonly dialog: Dialog | undefined;
  /** The INVITE that made the call: received (inbound) or sent (outbound, once sent). */
  readonly invite: SipRequest | undefined;
  readonly inbound: boolean;
  /** Where an outbound call goes. */
  readonly target?: Uri;
}

export function sipChannelInfo(item: string, call: CallSignalling): string | undefined {
  const { dialog, invite, inbound } = call;
  const party = (name: 'from' | 'to'): string => {
    const address = name === 'from' ? invite?.from() : invite?.to();
    return address ? formatUri(address.uri) : '';
  };
  switch (item) {
    case 'call-id':
      return call.callId;
    case 'secure':
      return dialog?.secure ? '1' : '0';
    case 'target_uri': {
      if (dialog) return formatUri(dialog.remoteTarget);
      if (call.target) return formatUri(call.target);
      const contacts = invite?.contacts();
      return contacts && contacts !== 'wildcard' && contacts[0] ? formatUri(contacts[0].uri) : '';
    }
    case 'local_uri':
      return party(inbound ? 'to' : 'from');
    case 'remote_uri':
      return party(inbound ? 'from' : 'to');
    case 'local_tag':
      return dialog?.localTag ?? (inbound ? '' : (invite?.fromTag() ?? ''));
    case 'remote_tag':
      return dialog?.remoteTag ?? (inbound ? (invite?.fromTag() ?? '') : '');
    case 'request_uri':
      return invite ? formatUri(invite.uri) : '';
    case 't38state':
      return 'DISABLED';
    default:
      return undefined;
  }
}
