// Failed-login cost with crypt users: event-loop time one wrong guess costs the server, and the
// ping latency (p50/p99) of an authenticated client while 8 clients send wrong crypt passwords.
// The server runs in its own process; each guessing client comes from its own loopback address
// (127.0.0.2 … 127.0.0.9), the pinging client from 127.0.0.1. Bounded in time.
// Usage: npm run bench:auth [-- --seconds 4 --guessers 8]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encrypt } from 'unixcrypt';
import { Authenticator } from '../src/ari/auth.ts';
import { loadConfig, type DeepPartialYaml } from '../src/config/config.ts';
import { startServer } from '../src/server.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string', default: '4' }, guessers: { type: 'string', default: '8' } },
});
const seconds = Math.min(Number(values.seconds), 30);
const guessers = Math.min(Number(values.guessers), 32);
const CRYPT_HASH = encrypt('the right password', '$6$benchsaltbench'); // 5000 rounds, the default
const PING_AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const WRONG_AUTH = `Basic ${Buffer.from('dashboard:a wrong guess').toString('base64')}`;

// ---------------------------------------------------------------------------------------------

function users(): DeepPartialYaml['ari'] {
  return {
    users: [
      { name: 'asterisk', password: 'asterisk' },
      { name: 'dashboard', password: CRYPT_HASH, password_format: 'crypt' },
    ],
  };
}

async function startTarget(overrides: DeepPartialYaml): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'target', JSON.stringify(overrides)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: String(chunk).trim(), child };
}

function get(url: string, authorization: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { authorization } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
  });
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

interface Load {
  p50: number;
  p99: number;
  pings: number;
  guesses: number;
  statuses: string;
}

/** Pings back to back from 127.0.0.1 while `guessers` clients send wrong crypt passwords. */
async function pingUnderLoad(url: string, guessing: number): Promise<Load> {
  const until = performance.now() + seconds * 1000;
  const statuses = new Map<number, number>();
  let guesses = 0;
  const guess = async (index: number): Promise<void> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.0.${index + 2}` });
    while (performance.now() < until) {
      const status = await get(`${url}/ari/asterisk/ping`, WRONG_AUTH, agent);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      guesses += 1;
    }
    agent.destroy();
  };
  const ping = async (): Promise<number[]> => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.1' });
    const latencies: number[] = [];
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the guessing start
    while (performance.now() < until) {
      const start = performance.now();
      const status = await get(`${url}/ari/asterisk/ping`, PING_AUTH, agent);
      if (status !== 200) throw new Error(`ping answered ${status}`);
      latencies.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    agent.destroy();
    return latencies.sort((a, b) => a - b);
  };
  const [latencies] = await Promise.all([ping(), ...Array.from({ length: guessing }, (_, i) => guess(i))]);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    pings: latencies.length,
    guesses,
    statuses: [...statuses].map(([status, count]) => `${count}×${status}`).join(' ') || '-',
  };
}

/** Event-loop time one wrong crypt guess costs the authenticator, measured in this process. */
async function eventLoopTimePerGuess(limits: boolean): Promise<{ perGuess: number; wall: number }> {
  const config = loadConfig({ path: null, env: {}, overrides: { ari: users() } });
  const failedLogins = { ...config.ari.failedLogins, maxPerAddress: limits ? config.ari.failedLogins.maxPerAddress : 0 };
  const authenticator = new Authenticator(config.ari.users, { failedLogins });
  const headers = { authorization: WRONG_AUTH };
  const query = new URLSearchParams();
  const call = (): unknown => authenticator.authenticate(headers, query, 'GET', '127.0.0.2');
  await call(); // warm-up (the first call may start the hashing thread)
  const count = 100;
  const before = performance.eventLoopUtilization();
  const start = performance.now();
  for (let i = 0; i < count; i++) await call();
  const wall = performance.now() - start;
  const used = performance.eventLoopUtilization(before);
  await authenticator.close();
  return { perGuess: used.active / count, wall: wall / count };
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const fmt = (n: number): string => n.toFixed(2).padStart(7);

  for (const limited of [false, true]) {
    const { perGuess, wall } = await eventLoopTimePerGuess(limited);
    const label = limited ? 'limits on' : 'limits off';
    rows.push(`event-loop time per wrong guess (${label.padEnd(10)}): ${fmt(perGuess)} ms (wall ${fmt(wall)} ms per guess, 100 in sequence)`);
  }

  const scenarios: Array<{ name: string; overrides: DeepPartialYaml; guessing: number }> = [
    { name: 'no guessing', overrides: { ari: users() }, guessing: 0 },
    { name: `${guessers} guessers, limits off`, overrides: { ari: { ...users(), failed_logins: { max_per_address: 0 } } }, guessing: guessers },
    { name: `${guessers} guessers, limits on`, overrides: { ari: users() }, guessing: guessers },
  ];
  for (const scenario of scenarios) {
    const target = await startTarget(scenario.overrides);
    try {
      const f = await pingUnderLoad(target.url, scenario.guessing);
      rows.push(
        `ping ${scenario.name.padEnd(24)} p50 ${fmt(f.p50)} ms  p99 ${fmt(f.p99)} ms  (${f.pings} pings; ${f.guesses} guesses answered ${f.statuses})`,
      );
    } finally {
      target.child.kill();
    }
  }
  process.stdout.write(`${seconds} s per run, wrong guesses against a $6$ (5000 rounds) user\n${rows.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------
// Target process: `auth.ts target <overrides JSON>` prints its URL.

if (positionals[0] === 'target') {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-auth-'));
  const overrides = JSON.parse(positionals[1] ?? '{}') as DeepPartialYaml;
  const config = loadConfig({
    path: null,
    env: {},
    overrides: { ...overrides, http: { port: 0 }, dirs: { data: dataDir }, logging: { console: false, level: 'warn' } },
  });
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const server = await startServer(config, { logDestination: sink });
  process.on('SIGTERM', () => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
  process.stdout.write(`${server.url}\n`);
} else {
  await main();
}
