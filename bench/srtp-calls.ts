// SDES-SRTP calls with the media workers on and off (issue 25): N raw SRTP callers (this process,
// each a UDP phone protecting PCMU with its own SrtpSession; SIPp 3.6 has no SRTP) call Echo() on a
// real Patchbay in a child process (bench/sip-capacity-target.ts, endpoint `srtp`) and send 50
// packets a second for --hold seconds. Per run: the server's main-thread CPU and its workers' (their
// own reports), in % of one core, the share of packets that came back and authenticated under the
// answer's key, and what the server refused (patchbay_sip_srtp_refused_packets_total). The machine's
// load average is printed beside: on a busy machine the figures are only indicative.
// --plain runs the same calls as plain RTP (endpoint `load`), the figures to compare with.
// Usage: npm run bench:srtp-calls [-- --calls 10,50 --hold 10 --workers 0,1 --plain --json]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SrtpSession } from '../src/media/srtp/session.ts';
import type { SrtpMasterKey, SrtpSuiteName } from '../src/media/srtp/suites.ts';
import { RawPhone, type PhoneDialog } from '../test/interop/raw-phone.ts';
import { ThreadCpuMeter } from './process-meter.ts';
import { scrapeMetrics } from './prometheus-text.ts';
import { EXTENSIONS, type TargetPlan } from './sip-capacity-target.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '10,50' },
    hold: { type: 'string', default: '10' },
    workers: { type: 'string', default: '0,1' },
    /** Plain RTP callers (endpoint `load`) instead: the same calls without SRTP, to compare. */
    plain: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const MAX_CALLS = 500;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const list = (text: string, max: number): number[] => text.split(',').map((part) => Math.min(Math.max(Math.floor(Number(part)) || 0, 0), max));

/** A raw phone whose offer carries a=crypto, sending SRTP and counting what comes back authentic. */
class SrtpCaller extends RawPhone {
  readonly key: SrtpMasterKey = { suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) };
  session: SrtpSession | undefined;
  /** Plain RTP: no a=crypto, packets sent and counted as they are. */
  plain = false;
  answeredCall = false;
  serverRtpPort = 0;
  sent = 0;
  back = 0;
  #sequence = 0;
  #timestamp = 0;
  readonly #packet = Buffer.alloc(172 + 32, 0x55);

  override async open(): Promise<void> {
    await super.open();
    this.rtp.on('message', (packet) => {
      // RawPhone keeps every packet: the bench needs none of them kept.
      this.received.length = 0;
      if (!this.answeredCall || (packet[1]! & 0x7f) !== 0) return;
      if (this.plain ? packet.length === 172 : this.session!.unprotectRtp(packet, packet.length) > 0) this.back += 1;
    });
  }

  override sdp(direction = 'sendrecv', version = 1): string {
    if (this.plain) return super.sdp(direction, version);
    const crypto = `a=crypto:1 ${this.key.suite} inline:${Buffer.from(this.key.keySalt).toString('base64')}`;
    return super.sdp(direction, version).replace(' RTP/AVP ', ' RTP/SAVP ').replace('a=ptime:20\r\n', `a=ptime:20\r\n${crypto}\r\n`);
  }

  /** Takes the answer's key and port. */
  answered(final: string): void {
    const port = /^m=audio (\d+) /m.exec(final);
    this.answeredCall = true;
    if (this.plain && port) {
      this.serverRtpPort = Number(port[1]);
      return;
    }
    const match = /^a=crypto:\d+ (AES_CM_128_HMAC_SHA1_(?:80|32)) inline:([A-Za-z0-9+/]{40})\s*$/m.exec(final);
    if (!match || !port) throw new Error(`no SRTP answer:\n${final}`);
    this.session = new SrtpSession(this.key, { suite: match[1] as SrtpSuiteName, keySalt: Buffer.from(match[2], 'base64') });
    this.serverRtpPort = Number(port[1]);
  }

  sendOne(): void {
    const packet = this.#packet;
    packet[0] = 0x80;
    packet[1] = 0;
    packet.writeUInt16BE(this.#sequence++ & 0xffff, 2);
    packet.writeUInt32BE((this.#timestamp += 160) >>> 0, 4);
    packet.writeUInt32BE(0x5eed, 8);
    packet.fill(0x55, 12, 172);
    const length = this.plain ? 172 : this.session!.protectRtp(packet, 172);
    this.rtp.send(packet, 0, length, this.serverRtpPort, '127.0.0.1');
    this.sent += 1;
  }
}

interface Target {
  readonly child: ChildProcess;
  readonly url: string;
  readonly sipPort: number;
  stop(): Promise<void>;
}

async function startTarget(plan: TargetPlan): Promise<Target> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'sip-capacity-target.ts'), JSON.stringify(plan)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-10_000)));
  const hello = await new Promise<{ url: string; sipPort: number }>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s: ${log.slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      resolve(JSON.parse(buffered.slice(0, newline)) as { url: string; sipPort: number });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}: ${log.slice(-2000)}`));
    });
  });
  return {
    child,
    ...hello,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface RunResult {
  readonly workers: number;
  readonly calls: number;
  readonly answered: number;
  /** CPU in % of one core over the hold: the server's main thread, and its workers together. */
  readonly mainCpu: number;
  readonly workersCpu: number;
  readonly streamsInWorkers: number;
  /** Packets that came back (Echo()) and authenticated, per packet sent. */
  readonly backShare: number;
  readonly refused: number;
  readonly load: number;
}

async function run(workers: number, calls: number, holdSeconds: number): Promise<RunResult> {
  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-srtp-'));
  const target = await startTarget({ maxCalls: calls, uas: '127.0.0.1:9', workers, dataDir: join(work, 'data') });
  const callers: SrtpCaller[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      const caller = new SrtpCaller(values.plain ? 'load' : 'srtp');
      caller.plain = values.plain;
      await caller.open();
      caller.serverPort = target.sipPort;
      callers.push(caller);
    }
    const dialogs = new Map<SrtpCaller, PhoneDialog>();
    // A few at a time: the set-up is not what is measured.
    for (let i = 0; i < callers.length; i += 10) {
      await Promise.all(callers.slice(i, i + 10).map(async (caller) => {
        const { dialog, final } = await caller.call(EXTENSIONS.echo);
        if (!/^SIP\/2\.0 200 /.test(final)) return;
        caller.answered(final);
        dialogs.set(caller, dialog);
      }));
    }
    const talking = callers.filter((caller) => caller.answeredCall);
    const timer = setInterval(() => {
      for (const caller of talking) caller.sendOne();
    }, 20);
    try {
      await sleep(2_000);
      for (const caller of talking) {
        caller.sent = 0;
        caller.back = 0;
      }
      const main = new ThreadCpuMeter(target.child.pid!);
      const samples: number[] = [];
      let streams = 0;
      const deadline = performance.now() + holdSeconds * 1000;
      while (performance.now() < deadline) {
        await sleep(1_000);
        const metrics = await scrapeMetrics(target.url);
        samples.push(metrics.sum('patchbay_media_worker_cpu_cores') ?? 0);
        streams = Math.max(streams, metrics.sum('patchbay_media_worker_streams') ?? 0);
      }
      const mainCpu = main.percent();
      const sent = talking.reduce((total, caller) => total + caller.sent, 0);
      const back = talking.reduce((total, caller) => total + caller.back, 0);
      const refused = (await scrapeMetrics(target.url)).sum('patchbay_sip_srtp_refused_packets_total') ?? 0;
      const workersCpu = samples.length === 0 ? 0 : (samples.reduce((a, b) => a + Math.max(0, b), 0) / samples.length) * 100;
      return { workers, calls, answered: talking.length, mainCpu, workersCpu, streamsInWorkers: streams, backShare: sent > 0 ? back / sent : 0, refused, load: os.loadavg()[0] };
    } finally {
      clearInterval(timer);
      await Promise.all([...dialogs].map(([caller, dialog]) => caller.request(dialog, 'BYE').catch(() => undefined)));
    }
  } finally {
    for (const caller of callers) caller.close();
    await target.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

const results: RunResult[] = [];
for (const calls of list(values.calls, MAX_CALLS).filter((n) => n > 0)) {
  for (const workers of list(values.workers, 16)) {
    const result = await run(workers, calls, Math.min(Math.max(Number(values.hold) || 10, 2), 600));
    results.push(result);
    console.log(
      `srtp-calls${values.plain ? ' (plain RTP)' : ''}: ${String(calls).padStart(4)} calls, workers ${workers}: main thread ${result.mainCpu.toFixed(1)} % of a core, workers ${result.workersCpu.toFixed(1)} %, ` +
        `${result.streamsInWorkers} streams in workers, ${(result.backShare * 100).toFixed(1)} % echoed back authentic, ${result.refused} refused, ${result.answered}/${calls} answered (load ${result.load.toFixed(2)})`,
    );
  }
}
if (values.json) console.log(JSON.stringify(results));
