// How long a 401 takes for a wrong password of a plain-password user and for an unknown name, with
// a slow crypt user configured (the decoy check makes both cost one crypt check): median and p90 of
// each over N requests, one at a time. A measurement, so not a test: test/ari/auth-budget.test.ts
// counts the checks instead, which load cannot change.
//   tsx bench/auth-failure-timing.ts [requests=21]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { encrypt } from 'unixcrypt';
import { loadConfig } from '../src/config/config.ts';
import { startServer } from '../src/server.ts';

const requests = Math.min(Math.max(3, Number(process.argv[2] ?? 21)), 500);
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-auth-timing-'));
const slow = encrypt('slow secret', '$6$rounds=60000$slowsalt');
const config = loadConfig({
  path: null,
  env: {},
  overrides: {
    http: { port: 0, bind: '127.0.0.1' },
    dirs: { data: dataDir },
    logging: { console: false, level: 'warn' },
    sip: { port: 0 },
    ari: {
      users: [{ name: 'asterisk', password: 'asterisk' }, { name: 'slow', password: slow, password_format: 'crypt' }],
      failed_logins: { max_per_address: 0 },
      crypt_checks_per_second: 0,
    },
  },
});
const server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
try {
  const time = async (authorization: string): Promise<number> => {
    const began = performance.now();
    const response = await fetch(`${server.url}/ari/asterisk/ping`, { headers: { authorization } });
    await response.arrayBuffer();
    if (response.status !== 401) throw new Error(`expected 401, got ${response.status}`);
    return performance.now() - began;
  };
  const plainWrong: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < requests; i++) {
    plainWrong.push(await time(basic('asterisk', `wrong ${i}`)));
    unknown.push(await time(basic(`nobody${i}`, `wrong ${i}`)));
  }
  const figures = (values: number[]): { median: number; p90: number } => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number): number => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1));
    return { median: at(0.5), p90: at(0.9) };
  };
  const [p, u] = [figures(plainWrong), figures(unknown)];
  console.log(JSON.stringify({ requests, plainWrongPasswordMs: p, unknownNameMs: u, ratio: Number((p.median / u.median).toFixed(2)) }));
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
