import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { InvalidError } from '../../src/core/errors.ts';
import { GlobalVariables } from '../../src/core/global-vars.ts';

describe('GlobalVariables', () => {
  it('sets, reads, lists and unsets variables', () => {
    const vars = new GlobalVariables();
    assert.equal(vars.get('FOO'), undefined);
    vars.set('FOO', 'bar');
    vars.set('EMPTY', '');
    assert.equal(vars.get('FOO'), 'bar');
    assert.equal(vars.get('EMPTY'), '');
    assert.deepEqual(vars.list(), { FOO: 'bar', EMPTY: '' });
    vars.set('FOO', undefined);
    assert.equal(vars.get('FOO'), undefined);
    assert.deepEqual(vars.list(), { EMPTY: '' });
  });

  it('rejects an empty name', () => {
    const vars = new GlobalVariables();
    assert.throws(() => vars.get(''), InvalidError);
    assert.throws(() => vars.set('', 'x'), InvalidError);
  });
});
