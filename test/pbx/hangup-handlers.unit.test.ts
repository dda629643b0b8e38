// The hang-up handler stack alone: how a pushed handler is completed from the channel's position
// (as Asterisk's expand_gosub_args), the order handlers are taken in, pop and wipe, and its bound.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import { InvalidError } from '../../src/core/errors.ts';
import { expandHandler, HangupHandlers, MAX_HANGUP_HANDLERS } from '../../src/pbx/hangup-handlers.ts';

/** A stand-in channel: the stack reads only its position (and uses it as a key). */
function channelAt(context: string, exten: string): Channel {
  return { location: { context, exten, priority: 3 }, hangingUp: false } as unknown as Channel;
}

describe('hang-up handler stack', () => {
  test('a handler is completed with the context and extension the channel is at when it is pushed', () => {
    const channel = channelAt('ctx', '100');
    assert.equal(expandHandler(channel, 'other,s,1(a,b)'), 'other,s,1(a,b)');
    assert.equal(expandHandler(channel, 's,1'), 'ctx,s,1');
    assert.equal(expandHandler(channel, 'label'), 'ctx,100,label');
    assert.equal(expandHandler(channel, ',,2(x)'), 'ctx,100,2(x)');
    assert.equal(expandHandler(channel, '5(x,(y))'), 'ctx,100,5(x,(y))');
    // No closing parenthesis: the rest is the arguments, as Asterisk reads it (with a warning there).
    assert.equal(expandHandler(channel, 'c,e,1(open'), 'c,e,1(open)');
    assert.equal(expandHandler(channel, 'c,e,1()'), 'c,e,1');
  });

  test('last pushed is taken first; pop and wipe replace; the first push is told once', () => {
    const told: Channel[] = [];
    const stacks = new HangupHandlers((channel) => told.push(channel));
    const channel = channelAt('ctx', 's');
    stacks.push(channel, 'h,1(a)');
    stacks.push(channel, 'h,1(b)');
    stacks.push(channel, '');
    assert.deepEqual(stacks.list(channel), ['ctx,h,1(b)', 'ctx,h,1(a)']);
    stacks.pop(channel, 'h,1(c)');
    assert.deepEqual(stacks.list(channel), ['ctx,h,1(c)', 'ctx,h,1(a)']);
    assert.equal(stacks.take(channel), 'ctx,h,1(c)');
    assert.equal(stacks.take(channel), 'ctx,h,1(a)');
    assert.equal(stacks.take(channel), undefined);
    assert.equal(stacks.has(channel), false);
    stacks.push(channel, 'h,1(d)');
    stacks.wipe(channel, '');
    assert.equal(stacks.has(channel), false);
    stacks.wipe(channel, 'h,1(e)');
    assert.deepEqual(stacks.list(channel), ['ctx,h,1(e)']);
    assert.equal(told.length, 3);
  });

  test(`a channel holds at most ${MAX_HANGUP_HANDLERS} handlers`, () => {
    const stacks = new HangupHandlers(() => {});
    const channel = channelAt('ctx', 's');
    for (let i = 0; i < MAX_HANGUP_HANDLERS; i++) stacks.push(channel, `h,1(${i})`);
    assert.throws(() => stacks.push(channel, 'h,1(over)'), InvalidError);
    assert.equal(stacks.list(channel).length, MAX_HANGUP_HANDLERS);
    // A pop that replaces the top still works on a full stack.
    stacks.pop(channel, 'h,1(top)');
    assert.equal(stacks.list(channel)[0], 'ctx,h,1(top)');
  });
});
