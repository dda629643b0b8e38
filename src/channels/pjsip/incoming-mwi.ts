// Unsolicited MWI NOTIFYs from an endpoint (an external voicemail system telling its counts), as
// res_pjsip_pubsub takes them: a NOTIFY outside any dialog whose body is
// application/simple-message-summary (RFC 3842), from an identified and authenticated endpoint with
// `incoming_mwi_mailbox=mailbox@context`, sets that mailbox's new and old counts in the core's
// mailboxes (what ARI's PUT /mailboxes does; the endpoints whose `mailboxes=` name it are told in
// turn) and is answered 200. Anything else Asterisk would not publish is answered 404: no such
// option, no `@context` in it, a body without a Voice-Message line.
import type { SipRequest } from '../../sip/message.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { InboundAuthenticator } from './inbound-auth.ts';
import type { PjsipRuntime } from './runtime.ts';

/** The counts res_pjsip_pubsub reads: a `Voice-Message: new/old (urgent new/urgent old)` line. */
export interface MessageSummaryCounts {
  readonly newMessages: number;
  readonly oldMessages: number;
}

/** Largest count taken: what a C int holds (Asterisk's sscanf %d). */
const MAX_COUNT = 2_147_483_647;
/** Lines of a message-summary body looked at; a real one has a handful. */
const MAX_LINES = 64;

/**
 * The counts of a message-summary body, undefined without a Voice-Message line. As Asterisk's
 * reading: case-insensitive, the first number alone is enough (old then 0), the urgent counts are
 * not used; a later Voice-Message line replaces an earlier one.
 */
export function readMessageSummary(body: string): MessageSummaryCounts | undefined {
  let counts: MessageSummaryCounts | undefined;
  const lines = body.split(/\r\n|\r|\n/, MAX_LINES);
  for (const line of lines) {
    const match = /^voice-message:\s*(\d{1,10})(?:\/(\d{1,10}))?/i.exec(line);
    if (!match) continue;
    const newMessages = Number(match[1]);
    const oldMessages = match[2] === undefined ? 0 : Number(match[2]);
    if (newMessages > MAX_COUNT || oldMessages > MAX_COUNT) continue;
    counts = { newMessages, oldMessages };
  }
  return counts;
}

/** Whether a request outside a dialog is an unsolicited MWI NOTIFY (its body says so). */
export function isMwiNotify(request: SipRequest): boolean {
  if (request.method !== 'NOTIFY') return false;
  const type = request.contentType()?.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/simple-message-summary';
}

export class IncomingMwi {
  constructor(
    private readonly runtime: PjsipRuntime,
    private readonly auth: InboundAuthenticator,
  ) {}

  receive(request: SipRequest, tx: ServerTransaction): void {
    const context = this.runtime.context;
    if (!context) return void tx.reply(503);
    const endpoint = this.auth.admit(request, tx);
    if (!endpoint) return;
    const mailbox = endpoint.incomingMwiMailbox;
    if (mailbox === undefined || !mailbox.includes('@')) return void tx.reply(404);
    const counts = readMessageSummary(request.body.toString('latin1'));
    if (!counts) return void tx.reply(404);
    if (!context.mailboxes.publish(mailbox, counts.oldMessages, counts.newMessages)) {
      this.runtime.log?.error({ endpoint: endpoint.id, mailbox }, `incoming MWI from ${endpoint.id}: the counts of mailbox ${mailbox} could not be stored (max_mailboxes)`);
      return void tx.reply(404);
    }
    tx.reply(200);
  }
}
