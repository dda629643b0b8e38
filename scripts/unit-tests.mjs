// `npm run test:unit`: the tests that boot no server and start no process, in seconds — the inner
// loop while changing a floor (docs/architecture.md). A test file belongs here when nothing it
// imports (following relative imports through test/ and src/) reaches src/server.ts or
// src/main.ts, and it spawns no child process (real peers, the entry point). `npm test` still runs
// every file; this only picks a fast subset, so a new test is sorted in without being listed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_ENTRIES = new Set(['src/server.ts', 'src/main.ts']);
const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
const SPAWNS_RE = /['"]node:child_process['"]/;

function testFiles(directory) {
  const out = [];
  for (const entry of fs.readdirSync(path.join(ROOT, directory), { withFileTypes: true })) {
    const child = path.posix.join(directory, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(child));
    else if (entry.name.endsWith('.test.ts')) out.push(child);
  }
  return out.sort();
}

const bootsMemo = new Map();
/** Whether `file` (relative to the repository) reaches a server entry point or spawns a process. */
function boots(file, visiting = new Set()) {
  if (SERVER_ENTRIES.has(file)) return true;
  if (bootsMemo.has(file)) return bootsMemo.get(file);
  if (visiting.has(file) || !fs.existsSync(path.join(ROOT, file))) return false;
  visiting.add(file);
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  let result = file.startsWith('test/') && SPAWNS_RE.test(text);
  for (const match of text.matchAll(IMPORT_RE)) {
    if (result) break;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1] ?? match[2])).replace(/\.js$/, '.ts');
    result = boots(target, visiting);
  }
  visiting.delete(file);
  bootsMemo.set(file, result);
  return result;
}

const unit = testFiles('test').filter((file) => !boots(file));
if (process.argv.includes('--list')) {
  console.log(unit.join('\n'));
} else {
  execFileSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=60000', ...unit], { cwd: ROOT, stdio: 'inherit' });
}
