import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadDefaultDialplan } from '../../src/dialplan/default-dialplan.ts';
import type { Dialplan } from '../../src/dialplan/dialplan.ts';

function program(plan: Dialplan, exten: string): string[] {
  const steps: string[] = [];
  for (let priority: number | undefined = 1; priority !== undefined; priority = plan.nextPriority('default', exten, priority)) {
    const step = plan.find('default', exten, priority)!;
    steps.push(step.appData === '' ? step.app : `${step.app}(${step.appData})`);
  }
  return steps;
}

describe('default dialplan', () => {
  const plan = loadDefaultDialplan();

  test('has the context default only', () => {
    assert.deepEqual(plan.contexts(), ['default']);
  });

  test('defines answer, echo, 1000 and hello', () => {
    assert.deepEqual(program(plan, 'answer'), ['Answer', 'Wait(3600)']);
    assert.deepEqual(program(plan, 'echo'), ['Answer', 'Echo']);
    assert.deepEqual(program(plan, '1000'), ['Answer', 'Stasis(test-app,dialplan)', 'Hangup']);
    assert.deepEqual(program(plan, 'hello'), ['Answer', 'Playback(hello-world)', 'Hangup']);
  });

  test('has nothing else', () => {
    assert.deepEqual(plan.extensions('default').sort(), ['1000', 'answer', 'echo', 'hello']);
    assert.equal(plan.matchExtension('default', '1001'), undefined);
  });
});
