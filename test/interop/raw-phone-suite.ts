// What the suites that drive RawPhones against a started server share: events read up to a match,
// a phone's answered dialog for the next INVITE it gets, and the wait until a test's channels are
// gone so that the next test starts from nothing.
import type { EventSocket, TestServer } from '../helpers/server.ts';
import type { PhoneDialog, RawPhone } from './raw-phone.ts';

type Json = Record<string, any>;

/** Every event up to and including the first that matches. */
export async function eventsUntilMatch(events: EventSocket, match: (event: Json) => boolean, timeoutMs: number): Promise<Json[]> {
  const deadline = Date.now() + timeoutMs;
  const seen: Json[] = [];
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    seen.push(event);
    if (match(event)) return seen;
  }
}

/** The phone's answered dialog for the next INVITE it gets (one offering sendrecv media). */
export async function answeredInvite(phone: RawPhone, timeoutMs: number): Promise<PhoneDialog> {
  const invite = await phone.nextMessage(/^INVITE /, timeoutMs, (m) => /^a=sendrecv/m.test(m));
  const callId = /^(?:call-id|i):\s*(\S+)/im.exec(invite)?.[1] ?? '';
  return phone.answeredDialog(callId, invite);
}

/** Waits until the server has no channel left, then until its events are quiet. */
export async function channelsDrained(server: TestServer, events: EventSocket, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (server.core.channels.list().length > 0) {
    if (Date.now() > deadline) throw new Error(`channels left: ${server.core.channels.list().map((c) => c.name).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await events.quiet(500);
}
