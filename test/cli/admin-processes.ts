// Processes for the admin CLI tests run as real processes (admin-process.test.ts, admin-stop.test.ts):
// the CLI's and the server's entry files under tsx, with temporary directories removed afterwards.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPidFile } from '../../src/cli/pidfile.ts';

export const ADMIN_MAIN = fileURLToPath(new URL('../../src/cli/admin-main.ts', import.meta.url));
const SERVER_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

const dirs: string[] = [];

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-admin-'));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Polls until `check` holds (a loaded machine gives no fixed delay that is always enough). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !(await check()); ) await new Promise((r) => setTimeout(r, 50));
}

export interface Spawned {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function spawnNode(args: string[], childEnv: NodeJS.ProcessEnv, cwd: string): { child: ReturnType<typeof spawn>; done: Promise<Spawned> } {
  const base = { ...process.env };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR', 'PATCHBAY_ARI_USER', 'PATCHBAY_ARI_PASSWORD', 'PATCHBAY_URL']) delete base[name];
  const child = spawn(process.execPath, ['--import', TSX, ...args], { cwd, env: { ...base, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const result: Spawned = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (result.stdout += String(d)));
  child.stderr!.on('data', (d) => (result.stderr += String(d)));
  const done = new Promise<Spawned>((resolve) => child.once('exit', (code) => resolve({ ...result, code, stdout: result.stdout, stderr: result.stderr })));
  return { child, done };
}

/** A server as its own process on a free port, answering ARI. */
export async function serverAsProcess() {
  const dir = tempDir();
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(p));
    });
  });
  const serverEnv = { PATCHBAY_HTTP_PORT: String(port), PATCHBAY_DATA_DIR: join(dir, 'data'), PATCHBAY_SIP_PORT: '0' };
  const serverProcess = spawnNode([SERVER_MAIN], serverEnv, dir);
  const url = `http://127.0.0.1:${port}/ari`;
  const auth = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
  let up = false;
  // The server compiles its sources under tsx at start: 60 s leaves room for a loaded CI machine.
  await until(async () => (up = await fetch(`${url}/asterisk/ping`, { headers: { authorization: auth } }).then((r) => r.ok, () => false)), 60_000);
  assert.ok(up, 'the server process answers');
  // The pidfile is written just after the listeners open; on a loaded machine that can be a moment
  // after the first answer, and `patchbay stop` needs it.
  await until(() => readPidFile(join(dir, 'data')) !== null);
  return { dir, port, serverEnv, serverProcess, url, auth };
}
