/**
 * NOTIFY bodies of the event packages Patchbay serves, built from protocol-level facts only:
 * - `dialog`: RFC 4235 application/dialog-info+xml (busy lamp fields), one dialog per watched extension;
 * - `presence`: RFC 3863 PIDF, application/pidf+xml;
 * - `message-summary`: RFC 3842 application/simple-message-summary (message-waiting indication).
 * Every value written into XML is escaped, and every text is bounded, so that no name a peer or a
 * configuration chose can break the document or grow it without limit.
 */

export const DIALOG_INFO_TYPE = 'application/dialog-info+xml';
export const PIDF_TYPE = 'application/pidf+xml';
export const MESSAGE_SUMMARY_TYPE = 'application/simple-message-summary';

/** Longest URI or name written into a body; longer ones are cut (a body stays small). */
const MAX_FIELD = 512;

/** Text for XML content and attribute values: the five markup characters and line breaks escaped, controls dropped. */
export function xmlEscape(value: string): string {
  return value
    .slice(0, MAX_FIELD)
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '')
    .replace(/[<>"&'\r\n]/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '"': '&quot;', '&': '&amp;', "'": '&apos;', '\r': '&#13;', '\n': '&#10;' })[ch]!);
}

/** RFC 4235 §4.1.6 dialog states a watched extension is shown in. */
export type DialogInfoState = 'early' | 'confirmed' | 'terminated';

export interface DialogInfo {
  /** The watched resource's URI (`sip:100@pbx`). */
  readonly entity: string;
  /** Increases by one with each NOTIFY of the subscription (§4.1.2), from 0. */
  readonly version: number;
  /** The dialog element's id: the extension. */
  readonly dialogId: string;
  readonly state: DialogInfoState;
  /** An early dialog is one the extension receives (`direction="recipient"`): it is ringing. */
  readonly ringing?: boolean;
  /** The extension holds its call: its local target says `+sip.rendering=no` (RFC 4235 §4.1.6.3). */
  readonly onHold?: boolean;
  /** Who is calling a ringing extension (the remote participant, §4.1.6.2), so that a phone can show it before picking up. */
  readonly remote?: { readonly uri: string; readonly display?: string };
}

/** A full-state dialog-info document with one dialog. */
export function dialogInfoXml(info: DialogInfo): string {
  const entity = xmlEscape(info.entity);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<dialog-info xmlns="urn:ietf:params:xml:ns:dialog-info" version="${Math.max(0, Math.floor(info.version))}" state="full" entity="${entity}">`,
    ` <dialog id="${xmlEscape(info.dialogId)}"${info.ringing && info.state === 'early' ? ' direction="recipient"' : ''}>`,
    `  <state>${info.state}</state>`,
  ];
  if (info.onHold) lines.push(`  <local>`, `   <target uri="${entity}">`, '    <param pname="+sip.rendering" pvalue="no"/>', '   </target>', '  </local>');
  if (info.remote) {
    const uri = xmlEscape(info.remote.uri);
    const display = info.remote.display ? ` display="${xmlEscape(info.remote.display)}"` : '';
    lines.push('  <remote>', `   <identity${display}>${uri}</identity>`, `   <target uri="${uri}"/>`, '  </remote>');
  }
  lines.push(' </dialog>', '</dialog-info>', '');
  return lines.join('\n');
}

export interface PresenceInfo {
  /** The presentity's URI (`sip:100@pbx`). */
  readonly entity: string;
  /** The tuple's id: the extension. RFC 3863 wants an XML ID, so anything else is replaced by `_`. */
  readonly tupleId: string;
  /** open: reachable for communication (idle or on the phone); closed: unavailable. */
  readonly open: boolean;
  /** A line for people (`Ready`, `On the phone`, `Ringing`, `On hold`, `Unavailable`). */
  readonly note: string;
  /** Where to reach the presentity, when known (the subscriber's URI, as Asterisk writes it). */
  readonly contact?: string;
}

/** A PIDF document with one tuple. */
export function pidfXml(info: PresenceInfo): string {
  const id = /^[A-Za-z_]/.test(info.tupleId) ? info.tupleId : `t${info.tupleId}`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<presence xmlns="urn:ietf:params:xml:ns:pidf" entity="${xmlEscape(info.entity)}">`,
    ` <tuple id="${xmlEscape(id.replace(/[^A-Za-z0-9._-]/g, '_'))}">`,
    `  <status><basic>${info.open ? 'open' : 'closed'}</basic></status>`,
  ];
  if (info.contact) lines.push(`  <contact priority="1">${xmlEscape(info.contact)}</contact>`);
  lines.push(' </tuple>', ` <note>${xmlEscape(info.note)}</note>`, '</presence>', '');
  return lines.join('\n');
}

export interface MessageSummary {
  readonly newMessages: number;
  readonly oldMessages: number;
  /** The Message-Account URI (RFC 3842 §5.2): where the voicemail is reached, when configured. */
  readonly account?: string;
}

/** RFC 3842 §5.2: Messages-Waiting, the optional Message-Account, then the voice-message counts (urgent counts 0). */
export function messageSummaryBody(summary: MessageSummary): string {
  const count = (value: number) => Math.max(0, Math.min(0x7fffffff, Math.floor(value)));
  const account = summary.account?.replace(/[\r\n]/g, '').slice(0, MAX_FIELD);
  return [
    `Messages-Waiting: ${count(summary.newMessages) > 0 ? 'yes' : 'no'}`,
    ...(account ? [`Message-Account: ${account}`] : []),
    `Voice-Message: ${count(summary.newMessages)}/${count(summary.oldMessages)} (0/0)`,
    '',
  ].join('\r\n');
}
