// Both sides of a SIP benchmark's server, shared by bench/sip.ts, bench/codecs-under-load.ts and
// bench/media-workers.ts. The child side is a real Patchbay (no console log, developer mode off, a
// fresh data directory, SIP on a free UDP port) with the bench's dialplan; it prints `<url> <sip
// port>` on stdout, writes its warnings and errors to stderr (the parent keeps the last of them)
// and stops when its parent closes stdin. The parent side spawns it and waits for that line.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { DeepPartialYaml } from '../src/config/config.ts';

/** Where every SIP bench sends its calls: test/sip/scenarios/call-hangup.xml (INVITE, 200, ACK, audio, BYE). */
export const CALL_SCENARIO = new URL('../test/sip/scenarios/call-hangup.xml', import.meta.url).pathname;

/** The child side: a Patchbay whose dialplan file holds `dialplan` (one line each) and whose settings are `overrides`. */
export async function runSipTarget(dialplan: readonly string[], overrides: DeepPartialYaml): Promise<void> {
  const { loadConfig } = await import('../src/config/config.ts');
  const { startServer } = await import('../src/server.ts');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-sip-target-'));
  const dialplanFile = join(dataDir, 'extensions.conf');
  writeFileSync(dialplanFile, [...dialplan, ''].join('\n'));
  const config = loadConfig({
    path: null,
    env: {},
    overrides: {
      ...overrides,
      http: { port: 0, bind: '127.0.0.1', ...overrides.http },
      dirs: { data: dataDir },
      ari: { developer_mode: false },
      logging: { console: false, level: 'warn' },
      dialplan: { file: dialplanFile },
      sip: { port: 0, ...overrides.sip },
    },
  });
  const toStderr = new Writable({
    write: (chunk, _encoding, done) => {
      process.stderr.write(chunk);
      done();
    },
  });
  const server = await startServer(config, { logDestination: toStderr });
  process.stdout.write(`${server.url} ${server.core.pjsip.port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void server.stop().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

/** The parent's handle on a running target. */
export interface SipTarget {
  readonly url: string;
  readonly sipPort: number;
  readonly pid: number;
  readonly child: ChildProcessWithoutNullStreams;
  /** The last lines of the target's log (warnings and above), at most five, each cut to 300 characters. */
  lastLogLines(): string[];
  /** Closes the target's stdin and waits for it to exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

/** The parent side: runs `script` (a bench file that calls runSipTarget when given `args`) and waits for its address. */
export async function startSipTarget(script: string, args: readonly string[]): Promise<SipTarget> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
  const [url, sipPort] = await new Promise<[string, number]>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      if (!buffered.includes('\n')) return;
      const [address, port] = buffered.split('\n')[0]!.trim().split(' ');
      resolve([address!, Number(port)]);
    });
    child.on('exit', (code) => reject(new Error(`target exited with ${code}: ${log.slice(-2000)}`)));
  });
  return {
    url,
    sipPort,
    pid: child.pid!,
    child,
    lastLogLines: () => log.split('\n').filter(Boolean).slice(-5).map((line) => line.slice(0, 300)),
    async stop(timeoutMs = 5000): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
