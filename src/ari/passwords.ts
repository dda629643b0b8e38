// ARI's password checking at request time. Plain passwords are compared in constant time on the
// spot; crypt hashes ($6$, $5$, $1$) cost milliseconds each, so the server verifies them on a worker
// thread (`PasswordHasher`), never on the event loop. The hash formats themselves live in
// src/util/password-hashes.ts (the configuration checks them at load time).
import crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { CRYPT_CHARS } from '../util/password-hashes.ts';

/** Relative cost of a crypt hash: MD5-crypt's 1000 rounds < SHA-256 < SHA-512, times rounds. */
function cryptCost(hash: string): number {
  if (hash.startsWith('$1$')) return 1000;
  const rounds = /^\$[56]\$rounds=(\d+)\$/.exec(hash);
  return (rounds ? Number(rounds[1]) : 5000) * (hash.startsWith('$6$') ? 2 : 1.5);
}

function randomCryptText(length: number): string {
  return [...crypto.randomBytes(length)].map((b) => CRYPT_CHARS[b & 0x3f]).join('');
}

/**
 * A hash no password matches, shaped like the costliest of `hashes` (scheme, rounds, salt and
 * digest lengths), so checking an unknown user costs what checking a known crypt user costs.
 */
export function decoyHashLike(hashes: readonly string[]): string | undefined {
  const model = [...hashes].sort((a, b) => cryptCost(b) - cryptCost(a))[0];
  if (model === undefined) return undefined;
  if (model.startsWith('$1$')) return `$1$${randomCryptText(8)}$${randomCryptText(22)}`;
  const rounds = /^\$[56]\$(rounds=\d+\$)/.exec(model)?.[1] ?? '';
  const scheme = model.slice(0, 3);
  return `${scheme}${rounds}${randomCryptText(16)}$${randomCryptText(scheme === '$5$' ? 43 : 86)}`;
}

/** Replies of the hashing thread. */
export interface HashReply {
  readonly id: number;
  readonly ok: boolean;
}

/**
 * Verifies crypt hashes on one worker thread, started on first use and restarted if it dies.
 * The thread does not keep the process alive. A check that cannot complete answers false.
 */
export class PasswordHasher {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, (ok: boolean) => void>();
  #nextId = 0;

  /** Checks waiting for or under way on the thread. */
  get pending(): number {
    return this.#pending.size;
  }

  verify(password: string, hash: string): Promise<boolean> {
    const worker = this.#start();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      worker.postMessage({ id, password, hash });
    });
  }

  /** Starts the thread ahead of the first check (it takes a moment to load). */
  warmUp(): void {
    this.#start();
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll();
    if (worker) await worker.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startHashWorker();
    worker.unref();
    worker.on('message', (reply: HashReply) => {
      const resolve = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      resolve?.(reply.ok === true);
    });
    const lost = (): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#failAll();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.#worker = worker;
    return worker;
  }

  #failAll(): void {
    for (const resolve of this.#pending.values()) resolve(false);
    this.#pending.clear();
  }
}

/**
 * The worker runs `password-worker.ts`. Worker threads do not inherit tsx's loader, so when the
 * sources run as TypeScript the thread registers it before importing the worker module.
 */
function startHashWorker(): Worker {
  const url = new URL(`./password-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  if (!url.pathname.endsWith('.ts')) return new Worker(url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(code, { eval: true });
}
