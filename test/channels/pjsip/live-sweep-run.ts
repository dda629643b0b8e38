// The live hostile-input sweep of SIP dialogs over one transport, shared by live-sweep.test.ts (UDP)
// and live-sweep-tcp.test.ts (TCP): one file a transport, as node's runner times each file as a
// whole and both sweeps in one file ran over its 180 s on a loaded machine.
//
// Seeded: PATCHBAY_SWEEP_SEED (default 0x5eed35) orders the cases and picks each one's hostile
// values; every case runs once per transport, and PATCHBAY_SWEEP_EXTRA more seeded picks run on top
// (default 0, so the test count and length stay the same from run to run).
import assert from 'node:assert/strict';
import { HostilePeer, statusOf, type PeerTransport } from '../../helpers/hostile-peer.ts';
import { parsePrometheus, sumOf } from '../../helpers/prometheus.ts';
import type { TestServer } from '../../helpers/server.ts';
import { sweepCases, type SweepCase } from './live-sweep-cases.ts';
import { pick, seeded, type Random } from './live-sweep-sdp.ts';
import { pollUntil as until } from './live-sweep-server.ts';

const SEED = Number(process.env.PATCHBAY_SWEEP_SEED ?? 0x5eed35);
/** PATCHBAY_SWEEP_ONLY (a regular expression) runs only the cases it matches: to reproduce one. */
const ONLY = process.env.PATCHBAY_SWEEP_ONLY ? new RegExp(process.env.PATCHBAY_SWEEP_ONLY) : undefined;
const EXTRA = Math.max(0, Math.min(10_000, Number(process.env.PATCHBAY_SWEEP_EXTRA ?? 0)));
/** What a crash looks like in the log: an uncaught exception, or a JavaScript error escaping a handler. */
const CRASH = /uncaught|unhandled|TypeError|RangeError|ReferenceError|SyntaxError|Maximum call stack|Cannot read prop/;

export async function metrics(server: TestServer): Promise<Map<string, number>> {
  return parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
}

/** The dialplan both sweeps run against: a call held answered, one held ringing, and alice's hint. */
export const SWEEP_EXTENSIONS = 'exten => hold,1,Answer()\n same => n,Wait(60)\nexten => ring,1,Ringing()\n same => n,Wait(60)\nexten => alice,hint,PJSIP/alice\n';

/** The SIP gauges back to zero once the transaction timers ran out (Timer J: 32 s after a UDP answer), and no channel left. */
export async function drained(server: TestServer): Promise<void> {
  const done = await until(async () => {
    const samples = await metrics(server);
    return ['patchbay_sip_calls', 'patchbay_sip_subscriptions', 'patchbay_sip_transactions'].every((name) => sumOf(samples, name) === 0);
  }, 60_000);
  const samples = await metrics(server);
  assert.ok(done, `left: calls ${sumOf(samples, 'patchbay_sip_calls')}, subscriptions ${sumOf(samples, 'patchbay_sip_subscriptions')}, transactions ${sumOf(samples, 'patchbay_sip_transactions')}`);
  assert.equal(await channelCount(server), 0);
}

export async function channelCount(server: TestServer): Promise<number> {
  const list = (await (await server.ari('/channels')).json()) as unknown[];
  return list.length;
}

/** The checks after a case; each failure is a finding (the sweep goes on, and reports them all). */
async function checkAfter(server: TestServer, peer: HostilePeer, testCase: SweepCase, logFrom: number, responsesFrom: number, findings: string[]): Promise<void> {
  const label = `${peer.transport} "${testCase.name}"`;
  // The case's requests were built by hand; a 5xx to one is a finding unless RFC 3261 asks for it.
  const serverErrors = peer.responses.slice(responsesFrom).filter((r) => r.status >= 500 && r.status < 600);
  if (!testCase.allow5xx && serverErrors.length > 0) findings.push(`${label}: answered ${serverErrors.map((r) => `${r.status} to ${r.cseq}`).join(', ')}`);
  // A TCP case may have made the server close the connection (framing): OPTIONS then goes over a fresh one.
  const prober = peer.closed ? await HostilePeer.open(peer.transport, server.core.pjsip.port) : peer;
  const options = await prober.request({ method: 'OPTIONS' }, 10_000);
  if (prober !== peer) prober.close();
  if (!options || statusOf(options) !== 200) findings.push(`${label}: OPTIONS afterwards got ${options ? statusOf(options) : 'no answer'}`);
  const ping = await server.ari('/asterisk/ping');
  if (ping.status !== 200) findings.push(`${label}: GET /ari/asterisk/ping afterwards got ${ping.status}`);
  const crashes = server.logLines.slice(logFrom).filter((line) => CRASH.test(line));
  if (crashes.length > 0) findings.push(`${label}: crash in the log: ${crashes[0].slice(0, 600)}`);
  if (!(await until(async () => (await channelCount(server)) === 0, 15_000))) {
    findings.push(`${label}: ${await channelCount(server)} channel(s) left after the case`);
    for (const channel of server.allChannels()) await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  }
  if (!(await until(async () => sumOf(await metrics(server), 'patchbay_sip_calls') === 0, 15_000))) findings.push(`${label}: patchbay_sip_calls stays above 0`);
}

/** Every case once (in a seeded order), then EXTRA seeded picks. */
function schedule(random: Random, cases: readonly SweepCase[]): SweepCase[] {
  const order = [...cases];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (let i = 0; i < EXTRA; i++) order.push(pick(random, cases));
  return order;
}

export async function sweep(server: TestServer, transport: PeerTransport): Promise<void> {
  const random = seeded(SEED ^ (transport === 'UDP' ? 0 : 0x7c9));
  const port = server.core.pjsip.port;
  // A UDP datagram holds the whole request (65,507 bytes at most); the parser takes 65,535 a message.
  const budget = transport === 'UDP' ? 30_000 : 60_000;
  const findings: string[] = [];
  let peer = await HostilePeer.open(transport, port);
  let answered = 0;
  try {
    for (const testCase of schedule(random, sweepCases(port))) {
      if (ONLY && !ONLY.test(testCase.name)) continue;
      if (peer.closed) peer = await HostilePeer.open(transport, port);
      const logFrom = server.logLines.length;
      const responsesFrom = peer.responses.length;
      await testCase.run({ peer, random, budget, finding: (what) => findings.push(`${transport} "${testCase.name}": ${what}`) });
      await checkAfter(server, peer, testCase, logFrom, responsesFrom, findings);
      const answers = peer.responses.slice(responsesFrom);
      answered += answers.filter((r) => r.status === 200 && / INVITE$/.test(r.cseq)).length;
      if (process.env.PATCHBAY_SWEEP_VERBOSE) {
        console.log(`${transport} ${testCase.name}: ${answers.map((r) => `${r.status} ${r.cseq.replace(/^\d+ /, '')}`).join(', ')}`);
        if (ONLY) for (const line of server.logLines.slice(logFrom)) console.log(`  ${line.slice(0, 400).trim()}`);
      }
    }
  } finally {
    peer.close();
  }
  assert.deepEqual(findings, []);
  // Not vacuous: most cases ran inside a call the server answered.
  if (!ONLY) assert.ok(answered >= 40, `only ${answered} INVITEs answered 200`);
}

