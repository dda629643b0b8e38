// Event sequencing benchmark: events per second from "an application raises an event" to "the
// transport has the text to send", with and without the event log (numbering + bounded buffer),
// and with the log persisted to SQLite, in the same run. The sink does what the WebSocket
// transport does with each event (the JSON text), without the socket itself.
// Usage: npm run bench:event-sequence [-- --events 200000 --rounds 3 --buffer 10000]
// (--buffer: events kept per application, ari.event_log.max_events; keeping them costs GC time)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Applications, type ApplicationSink } from '../src/core/applications.ts';
import { openDatabase } from '../src/core/database.ts';
import { EventLog } from '../src/core/event-log.ts';
import { formatAriDate } from '../src/util/ari-date.ts';
import type { CoreEvent } from '../src/spec/events.ts';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' }, buffer: { type: 'string', default: '10000' } },
});
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
const CHUNK = 1000;
const SERVER_ID = '02:00:00:00:00:01';
const LIMITS = { maxEvents: Number(values.buffer), maxBytes: 8 * 1024 * 1024, maxAgeSeconds: 600, maxApplications: 1000, maxTotalBytes: 256 * 1024 * 1024 };

/** A DTMF event on a channel, as the core raises it (a typical event of typical size). */
const channel = {
  id: '1732400000.42',
  name: 'PJSIP/alice-00000002',
  state: 'Up',
  protocol_id: 'a84d1b9e-5b67-4b1a-9d7a-3d0c2c1c0f3e',
  caller: { name: 'Alice', number: '1001' },
  connected: { name: '', number: '' },
  accountcode: '',
  dialplan: { context: 'default', exten: '1000', priority: 2, app_name: 'Stasis', app_data: 'bench' },
  creationtime: formatAriDate(),
  language: 'en',
  channelvars: {},
  tenantid: '',
};
const event = { type: 'ChannelDtmfReceived', timestamp: formatAriDate(), digit: '5', duration_ms: 100, channel } as unknown as CoreEvent;

let bytesOut = 0;
/** Today's transport: adds the delivery fields and serialises. */
const plainSink: ApplicationSink = {
  deliver(application, delivered, json) {
    bytesOut += (json ?? JSON.stringify({ ...delivered, application, asterisk_id: SERVER_ID })).length;
  },
};

function applications(log: EventLog | undefined): Applications {
  const registry = new Applications(() => true);
  registry.eventLog = log;
  registry.register('bench', plainSink, false);
  registry.subscribeInternal('bench', 'channel', channel.id);
  return registry;
}

/** Raises EVENTS events in chunks, yielding between them (so persisted batches are written as in the server). */
async function run(registry: Applications): Promise<number> {
  const scope = { channelIds: [channel.id] };
  const started = process.hrtime.bigint();
  for (let sent = 0; sent < EVENTS; sent += CHUNK) {
    for (let i = 0; i < CHUNK; i++) registry.publish(event, scope);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setImmediate(resolve));
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-seq-'));
const database = openDatabase(join(dataDir, 'patchbay.sqlite'));
const results: Record<string, number[]> = { plain: [], log: [], persisted: [] };
try {
  for (let round = 0; round < ROUNDS + 1; round++) {
    const plain = await run(applications(undefined));
    const memoryLog = new EventLog(LIMITS, SERVER_ID);
    const logged = await run(applications(memoryLog));
    const persistedLog = new EventLog(LIMITS, SERVER_ID);
    persistedLog.open(database);
    const persisted = await run(applications(persistedLog));
    persistedLog.close();
    database.exec('DELETE FROM event_log; DELETE FROM event_log_state;');
    // The first round warms the JIT up and is not counted.
    if (round === 0) continue;
    results.plain!.push(plain);
    results.log!.push(logged);
    results.persisted!.push(persisted);
  }
} finally {
  database.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const best = (seconds: number[]): number => Math.min(...seconds);
const perEventNs = (seconds: number): number => (seconds / EVENTS) * 1e9;
const plainNs = perEventNs(best(results.plain!));
console.log(`event sequencing: ${EVENTS} events of ${Buffer.byteLength(JSON.stringify({ ...event, application: 'bench', asterisk_id: SERVER_ID, sequence: 1 }))} bytes, best of ${ROUNDS} rounds, ${LIMITS.maxEvents} kept; ${(bytesOut / 1e6).toFixed(0)} MB handed to the sink`);
for (const [name, label] of [
  ['plain', "today's delivery (route + serialise)"],
  ['log', 'with sequencer + buffer (memory)'],
  ['persisted', 'with sequencer + buffer + SQLite'],
] as const) {
  const seconds = best(results[name]!);
  const ns = perEventNs(seconds);
  const extra = name === 'plain' ? '' : `  (+${(ns - plainNs).toFixed(0)} ns/event, ×${(ns / plainNs).toFixed(2)})`;
  console.log(`  ${label.padEnd(40)} ${Math.round(EVENTS / seconds).toLocaleString('en-US').padStart(10)} events/s  ${ns.toFixed(0).padStart(6)} ns/event${extra}`);
}
