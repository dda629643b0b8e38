// The published package (issue 22): `npm pack` holds what an administrator needs (the compiled
// server, docs, examples, example configurations, the systemd unit) and nothing private; installed
// in a temporary directory, `npx patchbay-ari --version` answers, and SIGTERM to `npx` stops the
// server (npm passes it to its shell only: the server must not be left orphaned).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const NAME = 'patchbay-ari';
const root = mkdtempSync(join(tmpdir(), 'patchbay-package-'));
let installed = '';

after(() => rmSync(root, { recursive: true, force: true }));

before(() => {
  assert.ok(existsSync(join(REPOSITORY, 'dist', 'main.js')), 'dist/main.js is built (npm run build)');
  // --ignore-scripts: the tarball of the dist/ already built (prepare would compile it again).
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], { cwd: REPOSITORY, encoding: 'utf8' })) as { filename: string; files: { path: string }[] }[];
  const tarball = join(root, packed[0]!.filename);
  const files = new Set(packed[0]!.files.map((file) => file.path));
  for (const wanted of ['dist/main.js', 'dist/console/public/index.html', 'docs/configuration.md', 'docs/cli.md', 'examples/first-app.js', 'patchbay.example.yaml', 'patchbay.sip.example.yaml', 'contrib/patchbay.service', 'README.md', 'LICENSE', 'package.json']) {
    assert.ok(files.has(wanted), `the package holds ${wanted}`);
  }
  for (const file of files) assert.doesNotMatch(file, /^(src|test|bench|\.ci|data)\//, `the package leaves ${file} out`);
  // Installed as npm would (node_modules/<name> and its bin links), its dependencies taken from this
  // repository's node_modules: no registry and no native compile in a test run.
  const project = join(root, 'project');
  installed = join(project, 'node_modules', NAME);
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  symlinkSync(join(REPOSITORY, 'node_modules'), join(installed, 'node_modules'), 'dir');
  mkdirSync(join(project, 'node_modules', '.bin'));
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { name: string; private?: boolean; bin: Record<string, string>; engines: { node: string } };
  assert.equal(manifest.name, NAME);
  assert.equal(manifest.private, undefined);
  assert.match(manifest.engines.node, /^\^20\.[\d.]+ \|\| \^22\.[\d.]+ \|\| >=24$/);
  for (const [bin, target] of Object.entries(manifest.bin)) {
    // npm makes a bin's target executable when it links it.
    chmodSync(join(installed, target), 0o755);
    symlinkSync(join('..', NAME, target), join(project, 'node_modules', '.bin', bin));
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'project', private: true, dependencies: { [NAME]: '*' } }));
});

/** `npx <args>` in the project, without the registry; PATCHBAY_* from the test only. */
function npx(args: string[], env: Record<string, string>) {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name.startsWith('PATCHBAY_') || name.startsWith('npm_')) delete base[name];
  return spawn('npx', ['--offline', '--no-install', ...args], { cwd: join(root, 'project'), env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

test('npx patchbay-ari --version answers from the installed package', async () => {
  const child = npx([NAME, '--version'], {});
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  assert.match(out, /^patchbay \d+\.\d+\.\d+/);
});

test('SIGTERM to npx stops the server it started: nothing is left listening', async () => {
  const child = npx([NAME], { PATCHBAY_HTTP_PORT: '0', PATCHBAY_SIP_PORT: '0', PATCHBAY_DATA_DIR: join(root, 'data') });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (let i = 0; i < 600 && !/Patchbay is listening/.test(output); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const listening = /"pid":(\d+)[^\n]*Patchbay is listening/.exec(output);
    assert.ok(listening, output);
    const serverPid = Number(listening[1]);
    assert.notEqual(serverPid, child.pid, 'npx runs the server as a child');
    child.kill('SIGTERM');
    await exited;
    // The server stops within its own 10 s bound once its launcher is gone.
    let alive = true;
    for (let i = 0; i < 150 && alive; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        process.kill(serverPid, 0);
      } catch {
        alive = false;
      }
    }
    assert.equal(alive, false, `the server (pid ${serverPid}) stopped after SIGTERM to npx`);
  } finally {
    // Whatever happened, nothing of this test outlives it (the group npx leads).
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});
