// What a media worker prints reaches the main thread as 'console' messages, because the main thread
// never reads a worker's stdio (pool.ts says why: reading it made every HTTP socket's stream
// functions slower). This covers the two ways a worker prints: its console, and Node's process
// warnings (a MaxListenersExceededWarning, a deprecation), whose default handler writes to the
// worker's own stderr, where nobody would ever see them and where they would pile up unread.
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';

/** Longest console text sent in one message, and messages a second at most (a failing listener prints at every tick). */
export const CONSOLE_TEXT_MAX = 2000;
export const CONSOLE_MESSAGES_PER_SECOND = 10;

/** Replaces this thread's console and process-warning printer with bounded 'console' messages on `port`. */
export function routeWorkerOutput(port: Pick<MessagePort, 'postMessage'>): void {
  // The rest of a second's burst is dropped: a worker printing at every packet must not flood the main thread.
  let second = 0;
  let sent = 0;
  const toMain = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const now = Math.floor(performance.now() / 1000);
      if (now !== second) [second, sent] = [now, 0];
      if (sent++ < CONSOLE_MESSAGES_PER_SECOND) port.postMessage({ type: 'console', text: chunk.toString('utf8', 0, Math.min(chunk.length, CONSOLE_TEXT_MAX)) });
      done();
    },
  });
  const console = new Console({ stdout: toMain, stderr: toMain });
  globalThis.console = console;
  // Node's own warning printer writes to process.stderr; printed as Node prints it (name, code, message).
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: string }) => {
    console.warn(`(worker) ${warning.code ? `[${warning.code}] ` : ''}${warning.name}: ${warning.message}`);
  });
}
