// The core's errors carry a kind (for the ARI status) and a stable machine-readable code, an own
// property that log serialisers carry; docs/errors.md lists every code with its class and kind.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { toAriError } from '../../src/ari/core-errors.ts';
import {
  ConflictError,
  CoreError,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  StateError,
  UnavailableError,
  UnprocessableError,
} from '../../src/core/errors.ts';

const ALL = [NotFoundError, ConflictError, ForbiddenError, InvalidError, UnprocessableError, StateError, UnavailableError];

test('each core error has its own code next to its kind, as an own enumerable property', () => {
  const errors = ALL.map((Class) => new Class('why'));
  assert.deepEqual(
    errors.map((error) => [error.name, error.kind, error.code]),
    [
      ['NotFoundError', 'not-found', 'PB_NOT_FOUND'],
      ['ConflictError', 'conflict', 'PB_CONFLICT'],
      ['ForbiddenError', 'forbidden', 'PB_FORBIDDEN'],
      ['InvalidError', 'invalid', 'PB_INVALID'],
      ['UnprocessableError', 'unprocessable', 'PB_UNPROCESSABLE'],
      ['StateError', 'state', 'PB_STATE'],
      ['UnavailableError', 'unavailable', 'PB_UNAVAILABLE'],
    ],
  );
  for (const error of errors) {
    assert.ok(error instanceof CoreError && error instanceof Error);
    assert.equal(JSON.parse(JSON.stringify(error)).code, error.code);
  }
});

test('the ARI answer keeps Asterisk’s body: the message, no code', () => {
  const answer = toAriError(new NotFoundError('Channel not found'));
  assert.equal(answer?.status, 404);
  assert.equal(answer?.message, 'Channel not found');
});

test('docs/errors.md lists every code with its class and kind', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const Class of ALL) {
    const error = new Class('x');
    assert.match(doc, new RegExp(`\\| \`${error.code}\` \\| \`${error.name}\` \\| \`${error.kind}\` \\|`), `${error.code} missing from docs/errors.md`);
  }
});
