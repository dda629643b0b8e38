// Failures that used to be silent, through the real entry point and a real server: `--check`
// exits 0/2 binding nothing; an explicitly configured SIP port that is taken stops start-up with
// exit 3; a defaulted one leaves the server running without SIP, /health `degraded` with the
// reason and /metrics `patchbay_sip_listening 0`; the listening line names the config sources.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { startServer } from '../../src/server.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const root = mkdtempSync(join(tmpdir(), 'patchbay-loud-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Runs the entry point to its end (bounded), with a clean PATCHBAY_* environment plus `env`. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name.startsWith('PATCHBAY_')) delete base[name];
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], { cwd: root, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? -1, stdout, stderr });
    }));
}

/** A UDP port held for the test's duration, so SIP cannot bind it. */
async function takenUdpPort(): Promise<{ port: number; release: () => void }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, release: () => socket.close() };
}

test('--check prints the report and exits 0, or 2 for a configuration that would not start; it binds nothing', async () => {
  const taken = await takenUdpPort();
  try {
    // The HTTP and SIP ports are taken by nobody here, but --check must not even try: a port in
    // use is a run-time matter, and the check runs beside a live server.
    const good = await run(['--check'], { PATCHBAY_DATA_DIR: join(root, 'check-data'), PATCHBAY_SIP_PORT: String(taken.port) });
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /^configuration: environment PATCHBAY_DATA_DIR, PATCHBAY_SIP_PORT/m);
    assert.match(good.stdout, /configuration ok/);
    const yaml = join(root, 'bad.yaml');
    writeFileSync(yaml, 'sip:\n  port: 99999\n');
    const bad = await run(['-t', '--config', yaml], {});
    assert.equal(bad.code, 2);
    assert.match(bad.stdout, /ERROR +config error at sip\.port/);
  } finally {
    taken.release();
  }
});

test('an explicitly configured SIP port that is taken stops start-up: one line, exit 3', async () => {
  const taken = await takenUdpPort();
  try {
    const result = await run([], { PATCHBAY_DATA_DIR: join(root, 'explicit-data'), PATCHBAY_HTTP_PORT: '0', PATCHBAY_SIP_PORT: String(taken.port) });
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, new RegExp(`patchbay: cannot listen on 127\\.0\\.0\\.1:${taken.port}: address already in use`));
  } finally {
    taken.release();
  }
});

test('a defaulted SIP port that is taken: the server runs, /health says degraded with the reason, /metrics patchbay_sip_listening 0', async () => {
  const taken = await takenUdpPort();
  const loaded = loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, dirs: { data: join(root, 'default-data') } } });
  // The embedded default port (5060) may be free or taken on a test machine: the same situation on
  // a port known to be taken, with the setting still counted as a default.
  const config = { ...loaded, sip: { ...loaded.sip, port: taken.port }, origin: { ...loaded.origin, explicit: {} } };
  const lines: string[] = [];
  const server = await startServer(config, {
    logDestination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  try {
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    const body = (await health.json()) as { status: string; reasons?: string[] };
    assert.equal(body.status, 'degraded');
    assert.match(body.reasons?.[0] ?? '', new RegExp(`SIP could not listen on sip UDP\\+TCP 127\\.0\\.0\\.1:${taken.port}: EADDRINUSE`));
    const metrics = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
    assert.equal(metrics.get('patchbay_sip_listening'), 0);
    assert.ok(lines.some((line) => /SIP is unavailable/.test(line)));
  } finally {
    await server.stop();
    taken.release();
  }
});
