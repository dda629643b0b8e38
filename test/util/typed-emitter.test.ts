// The shared emitter behind channel, module and configuration notifications: a listener that
// throws is reported and the others still run; once/off behave as with node:events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TypedEmitter } from '../../src/util/typed-emitter.ts';

type Events = { ping: number; [key: string]: unknown };

class Emitter extends TypedEmitter<Events> {
  override emit<E extends keyof Events & string>(event: E, payload: Events[E]): void {
    super.emit(event, payload);
  }
}

test('a throwing listener is reported and the rest still run', () => {
  const failures: [unknown, string][] = [];
  const emitter = new Emitter((error, event) => failures.push([error, event]));
  const seen: string[] = [];
  emitter.on('ping', () => seen.push('first'));
  emitter.on('ping', () => {
    throw new Error('boom');
  });
  emitter.once('ping', () => {
    throw new Error('once boom');
  });
  emitter.on('ping', (n) => seen.push(`last ${n}`));
  assert.doesNotThrow(() => emitter.emit('ping', 1));
  assert.deepEqual(seen, ['first', 'last 1']);
  assert.deepEqual(failures.map(([error, event]) => [(error as Error).message, event]), [['boom', 'ping'], ['once boom', 'ping']]);
  // The throwing once listener is gone even though it threw.
  assert.equal(emitter.listenerCount('ping'), 3);
});

test('a reporter that throws does not break the emit either', () => {
  const emitter = new Emitter(() => {
    throw new Error('reporter');
  });
  let ran = false;
  emitter.on('ping', () => {
    throw new Error('boom');
  });
  emitter.on('ping', () => (ran = true));
  assert.doesNotThrow(() => emitter.emit('ping', 1));
  assert.ok(ran);
});

test('once fires once; off removes the latest registration; removal during an emit still lets that emit call it', () => {
  const emitter = new Emitter();
  const calls: string[] = [];
  const a = (): void => {
    calls.push('a');
    emitter.off('ping', b);
  };
  const b = (): void => void calls.push('b');
  emitter.on('ping', a);
  emitter.on('ping', b);
  emitter.once('ping', () => calls.push('once'));
  emitter.emit('ping', 1);
  emitter.emit('ping', 2);
  assert.deepEqual(calls, ['a', 'b', 'once', 'a']);
  const c = (): void => void calls.push('c');
  emitter.once('ping', c);
  emitter.off('ping', c);
  emitter.off('ping', a);
  emitter.emit('ping', 3);
  assert.deepEqual(calls, ['a', 'b', 'once', 'a']);
  assert.equal(emitter.listenerCount('ping'), 0);
});
