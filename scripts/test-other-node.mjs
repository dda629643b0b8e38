// `npm run test:node -- 22 24`: the unit suite (scripts/unit-tests.mjs) on other Node.js versions,
// with the binary of the npm package `node@<major>`. Nothing shared is touched: the sources and
// tests are copied into .tmp/node-<major>/, whose node_modules links to this repository's
// packages except better-sqlite3, a copy rebuilt there for that Node's ABI (a prebuilt binary
// when one can be fetched, else a compile). The server suites stay on the Node that runs npm test
// (CI time); what they rely on is the same API the unit suite exercises.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const current = process.versions.node.split('.')[0];
// --skip-current: the version running this already ran the whole suite (CI).
const majors = args.filter((arg) => /^\d{2}$/.test(arg) && !(args.includes('--skip-current') && arg === current));
if (!args.some((arg) => /^\d{2}$/.test(arg))) {
  if (args.includes('--skip-current')) process.exit(0); // CI with PATCHBAY_CI_OTHER_NODE=""
  console.error('usage: node scripts/test-other-node.mjs [--skip-current] <major> [<major> …]   e.g. 22 24');
  process.exit(2);
}
if (majors.length === 0) {
  console.log(`# no other Node version to test (running on ${current})`);
  process.exit(0);
}
const COPIED = ['src', 'test', 'scripts', 'examples', 'docs', 'bench', 'README.md', 'patchbay.example.yaml', 'patchbay.sip.example.yaml', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.console.json'];

for (const major of majors) {
  const work = path.join(ROOT, '.tmp', `node-${major}`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  console.log(`# Node ${major}: installing the npm package node@${major}`);
  execFileSync('npm', ['install', '--prefix', path.join(work, 'runtime'), '--no-audit', '--no-fund', '--no-save', `node@${major}`], { stdio: 'inherit' });
  const binDir = path.join(work, 'runtime', 'node_modules', '.bin');
  const node = path.join(binDir, 'node');
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  console.log(`# Node ${major}: ${version}`);
  for (const entry of COPIED) fs.cpSync(path.join(ROOT, entry), path.join(work, entry), { recursive: true });
  const modules = path.join(work, 'node_modules');
  fs.mkdirSync(modules);
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name === 'better-sqlite3') continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
  fs.cpSync(path.join(ROOT, 'node_modules', 'better-sqlite3'), path.join(modules, 'better-sqlite3'), { recursive: true });
  fs.rmSync(path.join(modules, 'better-sqlite3', 'build'), { recursive: true, force: true });
  // npm runs install scripts with its own Node's directory first on PATH, so prebuild-install and
  // node-gyp are told the target, and node-gyp compiles against the headers the npm package
  // ships (node-<platform>-<arch>/include): a configured nodedir (the system Node's) would build
  // for the wrong ABI.
  const platformPackage = path.join(work, 'runtime', 'node_modules', 'node', 'node_modules', `node-${process.platform}-${process.arch}`);
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH}`, npm_config_nodedir: platformPackage, npm_config_target: version.slice(1), npm_config_runtime: 'node' };
  delete env.NODE_OPTIONS;
  const started = Date.now();
  execFileSync('npm', ['run', 'install'], { cwd: path.join(modules, 'better-sqlite3'), env, stdio: 'inherit' });
  console.log(`# Node ${major}: better-sqlite3 ready in ${Math.round((Date.now() - started) / 1000)} s`);
  execFileSync(node, ['scripts/unit-tests.mjs'], { cwd: work, env, stdio: 'inherit' });
}
