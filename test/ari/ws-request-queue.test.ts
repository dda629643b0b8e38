// REST requests on one event WebSocket are answered one at a time, in arrival order (as Asterisk's
// session thread answers them); a flood stops the socket being read at PAUSE_AT waiting requests,
// resumes it once they drain, and refuses what was read beyond REFUSE_AT (found by the hostile
// sweep: every request of a flood used to start at once).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAUSE_AT, REFUSE_AT, WebSocketRequestQueue } from '../../src/ari/ws-request-queue.ts';

class FakeSocket {
  isPaused = false;
  pauses = 0;
  pause(): void {
    this.isPaused = true;
    this.pauses++;
  }
  resume(): void {
    this.isPaused = false;
  }
}

test('one at a time, in order, even when an earlier answer takes longer', async () => {
  const socket = new FakeSocket();
  const done: string[] = [];
  let running = 0;
  let most = 0;
  const queue = new WebSocketRequestQueue(
    socket,
    async (text) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, text === 'slow' ? 30 : 1));
      done.push(text);
      running--;
    },
    () => assert.fail('no request fails'),
    () => assert.fail('nothing refused'),
  );
  for (const text of ['slow', 'a', 'b', 'slow', 'c']) queue.push(text);
  while (queue.waiting > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(done, ['slow', 'a', 'b', 'slow', 'c']);
  assert.equal(most, 1);
});

test('a flood pauses the socket, resumes it once drained, and refuses beyond the bound; a failure is reported and the queue goes on', async () => {
  const socket = new FakeSocket();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let answered = 0;
  let refused = 0;
  const failures: unknown[] = [];
  const queue = new WebSocketRequestQueue(
    socket,
    async (text) => {
      await gate;
      if (text === 'boom') throw new Error('boom');
      answered++;
    },
    (err) => failures.push(err),
    () => refused++,
  );
  queue.push('boom');
  for (let i = 1; i < REFUSE_AT + 10; i++) queue.push('x');
  assert.ok(socket.isPaused, 'reading stopped');
  assert.equal(socket.pauses, 1);
  assert.equal(queue.waiting, REFUSE_AT);
  assert.equal(refused, 10);
  release();
  while (queue.waiting > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(socket.isPaused, false, 'reading resumed');
  assert.equal(answered, REFUSE_AT - 1);
  assert.equal(failures.length, 1);
  assert.ok(PAUSE_AT < REFUSE_AT);
});
