// What keeping an ended call's SIP ladder in SQLite costs (src/channels/pjsip/ladder-store.ts):
// the ladders of N calls of ten messages each (an INVITE with SDP and its answers, about 5 KB of
// text) written into a store bounded at 200 calls, in batches of B (EndedLadders writes the dialogs
// due within a second together: B is about the call rate; 1 is a quiet server).
// Run: node --import tsx bench/ladder-store.ts [calls] [batch]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LadderStore } from '../src/channels/pjsip/ladder-store.ts';
import { SipLadder } from '../src/channels/pjsip/sip-ladder.ts';
import { openDatabase } from '../src/core/database.ts';
import { parseMessage } from '../src/sip/parser.ts';

const calls = Number(process.argv[2] ?? 2000);
const batch = Math.max(1, Number(process.argv[3] ?? 1));
const work = mkdtempSync(join(tmpdir(), 'patchbay-bench-ladder-'));
const sdp = 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n';

function message(callId: string, first: string, i: number): ReturnType<typeof parseMessage> {
  const text = `${first}\r\nVia: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK${i}\r\nFrom: <sip:alice@192.0.2.1>;tag=a\r\nTo: <sip:100@192.0.2.2>\r\nCall-ID: ${callId}\r\nCSeq: 1 INVITE\r\nContact: <sip:alice@192.0.2.1:5060>\r\nUser-Agent: bench\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`;
  return parseMessage(Buffer.from(text));
}

const ladder = new SipLadder({ messagesPerDialog: 64, dialogs: 500, maxCallRate: 1_000_000 });
const database = openDatabase(join(work, 'bench.sqlite'));
const store = new LadderStore({ calls: 200, bytes: 16 * 1024 * 1024 }, (error) => {
  throw error;
});
store.attach(database);
let saving = 0n;
let chars = 0;
let due: Array<ReturnType<SipLadder['get']> & object> = [];
for (let c = 0; c < calls; c++) {
  const callId = `bench-${c}`;
  for (let i = 0; i < 10; i++) {
    const parsed = message(callId, i === 0 ? 'INVITE sip:100@192.0.2.2 SIP/2.0' : 'SIP/2.0 200 OK', i);
    if (parsed.ok) ladder.record(parsed.message, i % 2 === 0 ? 'in' : 'out', 'UDP', '192.0.2.1', 5060);
  }
  ladder.bind(callId, { id: `id-${c}`, name: `PJSIP/alice-${c.toString(16).padStart(8, '0')}` });
  const dialog = ladder.get(callId)!;
  chars = dialog.chars;
  due.push(dialog);
  if (due.length < batch && c < calls - 1) continue;
  // Only the write is timed: the ladder itself is measured in docs/console.md.
  const started = process.hrtime.bigint();
  store.saveAll(due);
  saving += process.hrtime.bigint() - started;
  due = [];
}
const ms = Number(saving) / 1e6;
console.log(`batches of ${batch}: ${calls} ladders (${(chars / 1000).toFixed(1)} k characters each) saved in ${ms.toFixed(0)} ms: ${((ms * 1000) / calls).toFixed(0)} µs a call; ${store.size} kept, ${(store.bytes / 1024).toFixed(0)} KiB`);
store.detach();
database.close();
rmSync(work, { recursive: true, force: true });
