// `patchbay test --start`: the entry point starts a Patchbay from the configuration for the run
// (here the embedded defaults, whose hello@default plays hello-world) and stops it afterwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = `${ROOT}src/main.ts`;

/** The environment without PATCHBAY_CONFIG: the embedded defaults are the configuration. */
function withoutConfig(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PATCHBAY_CONFIG: _ignored, ...rest } = env;
  return rest;
}

test('patchbay test --start runs a scenario against a server it starts and stops', () => {
  const work = mkdtempSync(join(tmpdir(), 'callers-start-'));
  try {
    const scenario = join(work, 'hello.yaml');
    writeFileSync(scenario, 'dial: hello@default\nsteps:\n  - expect_audio: hello-world\n  - expect_hangup: { cause: 16 }\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'test', '--start', '--json', '-', '--artifacts', join(work, 'results'), scenario], {
      // From the repository, where tsx resolves.
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...withoutConfig(process.env), PATCHBAY_HTTP_PORT: '0', PATCHBAY_SIP_PORT: '0', PATCHBAY_DATA_DIR: join(work, 'data') },
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /1 passed, 0 failed, 1 calls/);
    assert.match(run.stdout, /"passed": 1/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
