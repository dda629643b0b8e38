// Channel on its own, without a server: its events in order, state and answer, variables and their
// bound, the audio path through hooks and listeners, DTMF, and the two-step hangup that tells the
// technology once and leaves the table — even when a chain of hangups follows or a listener throws.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CAUSE } from '../../src/core/channels/causes.ts';
import { ConflictError, InvalidError, UnavailableError } from '../../src/core/errors.ts';
import { MAX_CHANNEL_VARIABLES } from '../../src/core/variable-limits.ts';
import { frameOf, kernel, unitChannel } from './kernel-helpers.ts';

describe('Channel', () => {
  test('is announced on creation and found in its table by id and by name', () => {
    const k = kernel();
    const { channel } = unitChannel(k);
    assert.deepEqual(k.types(channel.id), ['ChannelCreated']);
    assert.equal(k.channels.get(channel.id), channel);
    assert.equal(k.channels.get(channel.name), channel);
    assert.equal(channel.linkedId, channel.id);
    assert.equal(channel.language, 'en');
    assert.deepEqual(channel.location, { context: 'default', exten: 's', priority: 1, appName: '', appData: '' });
  });

  test('answer() makes the channel Up once, then tells the technology', () => {
    const k = kernel();
    const { channel, driver } = unitChannel(k);
    const states: string[] = [];
    channel.on('state', (state) => states.push(state));
    channel.answer();
    channel.answer();
    assert.equal(channel.state, 'Up');
    assert.equal(channel.answered, true);
    assert.deepEqual(driver.calls, ['answer']);
    assert.deepEqual(states, ['Up']);
    assert.deepEqual(k.types(channel.id), ['ChannelCreated', 'ChannelStateChange']);
  });

  test('a ringing indication from the far end moves an outbound channel to Ringing, not an inbound one', () => {
    const k = kernel();
    const outbound = unitChannel(k, { direction: 'outbound', state: 'Down' }).channel;
    const inbound = unitChannel(k, { direction: 'inbound', state: 'Ring' }).channel;
    outbound.remoteIndication('ringing');
    inbound.remoteIndication('ringing');
    assert.equal(outbound.state, 'Ringing');
    assert.equal(inbound.state, 'Ring');
    outbound.remoteIndication('answer');
    assert.equal(outbound.state, 'Up');
  });

  test('variables: set, unset, ChannelVarset each time; a new name beyond the bound is refused, system variables are not', () => {
    const k = kernel();
    const { channel } = unitChannel(k);
    channel.setVariable('GREETING', 'hello');
    assert.equal(channel.getVariable('GREETING'), 'hello');
    channel.setVariable('GREETING', undefined);
    assert.equal(channel.getVariable('GREETING'), undefined);
    assert.deepEqual(k.types(channel.id), ['ChannelCreated', 'ChannelVarset', 'ChannelVarset']);

    for (let i = channel.variableCount; i < MAX_CHANNEL_VARIABLES; i++) channel.setVariable(`V${i}`, 'x');
    assert.equal(channel.variableCount, MAX_CHANNEL_VARIABLES);
    assert.throws(() => channel.setVariable('ONE_TOO_MANY', 'x'), InvalidError);
    channel.setVariable('V1', 'overwritten');
    assert.equal(channel.getVariable('V1'), 'overwritten');
    channel.setSystemVariable('DIALSTATUS', 'ANSWER');
    assert.equal(channel.getVariable('DIALSTATUS'), 'ANSWER');
  });

  test('audio from the far end passes the read hooks, then every frame listener; audio towards it the write hooks, then the technology', () => {
    const k = kernel();
    const { channel, driver } = unitChannel(k, { state: 'Up' });
    const heard: number[] = [];
    channel.addAudioHook('read', (frame) => frameOf(frame.samples[0] + 1));
    channel.addFrameListener((frame) => heard.push(frame.samples[0]));
    channel.addFrameListener((frame) => heard.push(frame.samples[0] * 10));
    channel.deliver(frameOf(5));
    assert.deepEqual(heard, [6, 60]);

    const double = (frame: ReturnType<typeof frameOf>) => frameOf(frame.samples[0] * 2);
    channel.addAudioHook('write', double);
    channel.write(frameOf(7));
    channel.removeAudioHook('write', double);
    channel.write(frameOf(7));
    assert.deepEqual(driver.frames.map((frame) => frame.samples[0]), [14, 7]);
  });

  test('a DTMF digit from the far end is announced and told to listeners', () => {
    const k = kernel();
    const { channel } = unitChannel(k, { state: 'Up' });
    const digits: string[] = [];
    channel.on('dtmf', ({ digit, durationMs }) => digits.push(`${digit}/${durationMs}`));
    channel.receiveDigit('5', 120);
    assert.deepEqual(digits, ['5/120']);
    const event = k.events.at(-1)!;
    assert.equal(event.type, 'ChannelDtmfReceived');
    assert.deepEqual([event.digit, event.duration_ms], ['5', 120]);
  });

  test('hangup: request, listeners, the technology once, ChannelDestroyed with the cause; the table forgets the channel; nothing flows after', () => {
    const k = kernel();
    const { channel, driver } = unitChannel(k, { state: 'Up' });
    const order: string[] = [];
    channel.on('hangup', ({ cause }) => order.push(`listener:${cause}`));
    k.channels.onDestroyed((gone) => order.push(`destroyed:${gone.id === channel.id}`));
    channel.hangup(CAUSE.busy);
    channel.hangup(CAUSE.normal);
    assert.deepEqual(k.types(channel.id), ['ChannelCreated', 'ChannelHangupRequest', 'ChannelDestroyed']);
    assert.deepEqual(order, [`listener:${CAUSE.busy}`, 'destroyed:true']);
    assert.deepEqual(driver.calls, ['hangup']);
    assert.equal(driver.hangupCause, CAUSE.busy);
    const destroyed = k.events.at(-1)!;
    assert.equal(destroyed.type === 'ChannelDestroyed' && destroyed.cause_txt, 'User busy');
    assert.equal(channel.destroyed, true);
    assert.equal(k.channels.get(channel.id), undefined);

    channel.write(frameOf(1));
    channel.receiveDigit('1', 100);
    assert.equal(driver.frames.length, 0);
    assert.deepEqual(k.types(channel.id), ['ChannelCreated', 'ChannelHangupRequest', 'ChannelDestroyed']);
  });

  test('a hangup from the far end does not echo back to the technology', () => {
    const k = kernel();
    const { channel, driver } = unitChannel(k, { state: 'Up' });
    channel.hangup(CAUSE.normal, { fromFarEnd: true });
    assert.deepEqual(driver.calls, []);
    assert.equal(channel.destroyed, true);
  });

  test('a chain of hangups, each causing the next, runs without recursion and destroys every link', () => {
    const k = kernel();
    const chain = Array.from({ length: 5000 }, () => unitChannel(k, { state: 'Up' }).channel);
    chain.forEach((channel, i) => channel.on('hangup', () => chain[i + 1]?.hangup()));
    chain[0].hangup();
    assert.equal(k.channels.size, 0);
    assert.ok(chain.every((channel) => channel.destroyed));
  });

  test('a throwing hangup listener is reported and the channel still leaves', () => {
    const k = kernel();
    const { channel, driver } = unitChannel(k, { state: 'Up' });
    channel.on('hangup', () => {
      throw new Error('listener broke');
    });
    channel.hangup();
    assert.equal(channel.destroyed, true);
    assert.deepEqual(driver.calls, ['hangup']);
    assert.equal(k.errors.length, 1);
    assert.match(String(k.errors[0].error), /listener broke/);
  });

  test('the table refuses a channel beyond max_channels and an id already in use', () => {
    const k = kernel({ maxChannels: 1 });
    const { channel } = unitChannel(k);
    assert.throws(() => unitChannel(k), UnavailableError);
    channel.hangup();
    const next = unitChannel(k).channel;
    assert.throws(() => k.channels.create({ id: next.id, name: 'Unit/dup', technology: 'Unit', direction: 'inbound', state: 'Ring' }), ConflictError);
  });
});
