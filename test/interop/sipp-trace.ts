// Reading back what SIPp received from its -trace_msg message file: the transfer tests check the
// NOTIFYs a transferring phone got, in order, and when (one reader, so every test parses alike).
import { readFileSync } from 'node:fs';

/** The messages SIPp received, in order, from its message trace, with their time of day (ms). */
export function receivedTimed(traceFile: string): Array<{ at: number; message: string }> {
  const trace = readFileSync(traceFile, 'latin1');
  const entries = trace.split(/^(?=-{10,})/m);
  return entries
    .filter((entry) => /message received/.test(entry))
    .map((entry) => {
      const clock = /(\d\d):(\d\d):(\d\d)\.(\d{3})/.exec(entry.split('\n')[0] ?? '');
      const at = clock ? ((Number(clock[1]) * 60 + Number(clock[2])) * 60 + Number(clock[3])) * 1000 + Number(clock[4]) : Number.NaN;
      const body = entry.slice(entry.indexOf('\n') + 1);
      return { at, message: body.slice(body.indexOf(':') + 1).trimStart() };
    });
}

/** The messages SIPp received, in order, from its message trace. */
export function receivedMessages(traceFile: string): string[] {
  return receivedTimed(traceFile).map(({ message }) => message);
}

/**
 * The NOTIFYs SIPp received, in order, from its message trace: sipfrag status line and
 * Subscription-State. A retransmission (the same Call-ID and CSeq again: UDP, our 200 was late) is
 * the same request and counted once.
 */
export function receivedNotifies(traceFile: string): Array<{ frag: string; state: string }> {
  const seen = new Set<string>();
  return receivedMessages(traceFile)
    .filter((message) => message.startsWith('NOTIFY '))
    .filter((message) => {
      const key = `${/^Call-ID:\s*(.*)$/im.exec(message)?.[1]?.trim()} ${/^CSeq:\s*(.*)$/im.exec(message)?.[1]?.trim()}`;
      return !seen.has(key) && Boolean(seen.add(key));
    })
    .map((message) => ({
      frag: /\r?\n\r?\n(SIP\/2\.0 [^\r\n]*)/.exec(message)?.[1] ?? '',
      state: /^Subscription-State:\s*([^\r\n]*)/im.exec(message)?.[1]?.trim() ?? '',
    }));
}
