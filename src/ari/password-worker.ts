// The crypt-hashing thread of `PasswordHasher`: answers `{id, password, hash}` with `{id, ok}`.
import { parentPort } from 'node:worker_threads';
import { verifyCrypt } from '../util/password-hashes.ts';
import type { HashReply } from './passwords.ts';

parentPort?.on('message', (request: { id: number; password: string; hash: string }) => {
  const reply: HashReply = { id: request.id, ok: verifyCrypt(request.password, request.hash) };
  parentPort?.postMessage(reply);
});
