// A media worker's console and Node's process warnings reach the main thread as bounded 'console'
// messages (the main thread never reads a worker's stdio): a warning is not lost on the worker's
// unread stderr, and a burst is cut to the per-second bound.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { CONSOLE_MESSAGES_PER_SECOND, CONSOLE_TEXT_MAX } from '../../../src/media/workers/worker-console.ts';

const moduleUrl = new URL('../../../src/media/workers/worker-console.ts', import.meta.url).href;

/** Runs `body` in a worker whose output is routed, and collects what reaches the main thread. */
async function runWorker(body: string): Promise<{ messages: string[]; stderr: string; stdout: string }> {
  // As pool.ts starts a worker from source: tsx registered in the thread, then the module imported.
  const tsx = import.meta.resolve('tsx/esm/api');
  // The timer holds the thread's event loop open while the imports run: the loader hooks tsx
  // registers answer from a thread of their own, and a loop with nothing else in it may end first.
  const source = `const { parentPort } = require('node:worker_threads');
const keepAlive = setTimeout(() => {}, 60000);
import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(moduleUrl)}); }).then(({ routeWorkerOutput }) => {
  routeWorkerOutput(parentPort);
  ${body}
  setTimeout(() => { clearTimeout(keepAlive); parentPort.postMessage({ type: 'done' }); }, 300);
});`;
  const worker = new Worker(source, { eval: true, execArgv: [], stdout: true, stderr: true });
  // Listened for from the start: the worker ends on its own once done, and an 'exit' listener added
  // after that would wait for ever (Node 22 in CI: the event loop then ended with the test pending).
  const exited = once(worker, 'exit');
  const messages: string[] = [];
  let stderr = '';
  let stdout = '';
  worker.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
  worker.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
  const done = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the worker ended (code ${code}) before it was done; stderr: ${stderr}`)));
    worker.on('message', (message: { type: string; text?: string }) => {
      if (message.type === 'console' && message.text !== undefined) messages.push(message.text);
      if (message.type === 'done') resolve();
    });
  });
  await done;
  await Promise.all([worker.terminate(), exited]);
  return { messages, stderr, stdout };
}

describe('a media worker\'s output', () => {
  test('a process warning crosses as a console message, not to the unread stderr', { timeout: 60_000 }, async () => {
    const { messages, stderr, stdout } = await runWorker(`process.emitWarning('listeners piling up', { code: 'PB_TEST' });`);
    assert.equal(messages.length, 1, JSON.stringify(messages));
    assert.match(messages[0]!, /\[PB_TEST\] Warning: listeners piling up/);
    assert.equal(stderr, '');
    assert.equal(stdout, '');
  });

  test('console output is bounded in length and in messages a second', { timeout: 60_000 }, async () => {
    const { messages } = await runWorker(`console.log('x'.repeat(${CONSOLE_TEXT_MAX * 3}));
for (let i = 0; i < 50; i++) console.error('burst ' + i);`);
    // Within one second at most the bound arrives (two seconds if the burst straddled a boundary).
    assert.ok(messages.length >= 1 && messages.length <= 2 * CONSOLE_MESSAGES_PER_SECOND, String(messages.length));
    assert.equal(messages[0]!.length, CONSOLE_TEXT_MAX);
  });
});
