// bench/sip-capacity.ts at its smallest step (5 calls held 4 s, each scenario), so that the bench
// cannot rot: it must start its server and both SIPp instances, carry every call with RTP flowing
// both ways, measure, print its JSON summary and leave nothing behind. No figure is judged here
// (measurements belong to the bench): only that there are figures.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HAVE_SIPP, HAVE_SOX } from './sipp-peer.ts';

const BENCH = fileURLToPath(new URL('../../bench/sip-capacity.ts', import.meta.url));
const missing = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : undefined;

interface StepSummary {
  readonly scenario: string;
  readonly calls: number;
  readonly failed: number;
  readonly upChannels: number;
  readonly expectedChannels: number;
  readonly rtp: { readonly received: number; readonly sent: number };
  readonly cpu: { readonly server: number; readonly caller: number; readonly answerer: number | null };
}

test('bench:sip-capacity runs its smallest step: 5 calls held 4 s into Echo(), a Playback() loop and a B2BUA Dial() to an echoing SIPp', { skip: missing, timeout: 180_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', BENCH, '--steps', '5', '--hold', '4', '--rate', '20', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // The bench bounds itself (about 15 s a scenario here); this only stops a hung one.
  const timer = setTimeout(() => child.kill('SIGINT'), 150_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  assert.equal(code, 0, output.slice(-3000));
  const json = output.trim().split('\n').reverse().find((line) => line.startsWith('{'));
  assert.ok(json, `no JSON summary:\n${output.slice(-3000)}`);
  const result = JSON.parse(json) as { summaries: Array<{ scenario: string; steps: StepSummary[] }> };
  assert.deepEqual(result.summaries.map((summary) => summary.scenario), ['echo', 'playback', 'b2bua']);
  for (const { scenario, steps } of result.summaries) {
    assert.equal(steps.length, 1, `${scenario}: one step`);
    const [step] = steps;
    const context = `${scenario}: ${JSON.stringify(step)}\n${output.slice(-2000)}`;
    assert.equal(step.calls, 5, context);
    assert.equal(step.failed, 0, context);
    assert.equal(step.upChannels, step.expectedChannels, context);
    assert.equal(step.expectedChannels, scenario === 'b2bua' ? 10 : 5, context);
    assert.ok(step.rtp.received > 0 && step.rtp.sent > 0, `${context}\nRTP flows both ways`);
    assert.ok(step.cpu.server > 0 && step.cpu.caller >= 0, context);
    assert.equal(step.cpu.answerer !== null, scenario === 'b2bua', context);
  }
});
