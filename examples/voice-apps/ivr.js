// An example IVR on ARI: a welcome menu walked by DTMF, a wrong key, a timeout and a transfer to
// a queue-like application. Its scenario files (scenarios/ivr-*.yaml) test it with virtual
// callers: `patchbay test examples/voice-apps/scenarios/ivr-*.yaml` (docs/testing-voice-apps.md).
//
//   menu (sound:dir-welcome), then 2 s for a key:
//     1  "sales": sound:hello-world, then hang up (cause 16)
//     2  transfer: the call moves to the application ivr-queue, which puts it in the holding
//        bridge "support-queue", thanks the caller (sound:queue-thankyou) and plays a 440 Hz hold tone
//     9  the menu again
//     any other key: sound:beeperr, then the menu again
//     no key: sound:vm-goodbye and hang up (cause 16)
//
// Run it beside a Patchbay whose dialplan sends calls to Stasis(ivr-demo) (extensions.conf here):
//   node examples/voice-apps/ivr.js          (IVR_BROKEN=1: a wrong key hangs up, for the demo of a failing test)
import { randomUUID } from 'node:crypto';
import { ariFromEnv, connectAri } from './ari.js';

const MENU_TIMEOUT_MS = 2000;

export async function startIvr(options = ariFromEnv(), { broken = false } = {}) {
  const calls = new Map();
  let queueBridge;

  const ari = await connectAri({ ...options, apps: ['ivr-demo', 'ivr-queue'] }, (event) => {
    const channel = event.channel;
    if (event.type === 'StasisStart' && event.application === 'ivr-demo') guarded(channel.id, startCall(channel.id));
    else if (event.type === 'StasisStart' && event.application === 'ivr-queue') guarded(channel.id, enqueue(channel.id));
    else if (event.type === 'ChannelDtmfReceived' && calls.has(channel.id)) guarded(channel.id, onKey(calls.get(channel.id), event.digit));
    else if (event.type === 'PlaybackFinished') onPlaybackFinished(event.playback);
    else if ((event.type === 'StasisEnd' || event.type === 'ChannelDestroyed') && channel) forget(channel.id);
  });

  // Every call's work runs unawaited (from events and timers), and the caller may hang up at any
  // moment: a request about a channel that is gone fails with 404. Such a failure ends that call's
  // story, never the process (an unhandled rejection would, taking every other call with it).
  function guarded(id, work) {
    work.catch((err) => {
      if (calls.has(id) || !/: 404 /.test(err.message)) console.error(`call ${id}:`, err.message);
    });
  }

  // The playback's id is chosen here, and what follows it recorded before the request: a
  // PlaybackFinished of an earlier prompt arriving meanwhile must not run this one's follow-up.
  const play = async (call, media, afterPlayback) => {
    call.playback = randomUUID();
    call.afterPlayback = afterPlayback;
    await ari.request('POST', `/channels/${call.id}/play`, { media, playbackId: call.playback });
  };

  async function startCall(id) {
    const call = { id, state: 'menu', playback: undefined, timer: undefined, afterPlayback: undefined };
    calls.set(id, call);
    await ari.request('POST', `/channels/${id}/answer`);
    await menu(call);
  }

  async function menu(call) {
    call.state = 'menu';
    clearTimeout(call.timer);
    await play(call, 'sound:dir-welcome', () => {
      call.timer = setTimeout(() => guarded(call.id, timeout(call)), MENU_TIMEOUT_MS);
    });
  }

  async function timeout(call) {
    call.state = 'leaving';
    await play(call, 'sound:vm-goodbye', () => hangup(call));
  }

  async function onKey(call, digit) {
    if (call.state !== 'menu') return;
    clearTimeout(call.timer);
    call.afterPlayback = undefined;
    // Barge-in: a key stops the menu.
    if (call.playback) await ari.request('DELETE', `/playbacks/${call.playback}`).catch(() => undefined);
    switch (digit) {
      case '1':
        call.state = 'leaving';
        await play(call, 'sound:hello-world', () => hangup(call));
        return;
      case '2':
        call.state = 'transferred';
        await ari.request('POST', `/channels/${call.id}/move`, { app: 'ivr-queue' });
        return;
      case '9':
        await menu(call);
        return;
      default:
        if (broken) {
          // The deliberate defect of IVR_BROKEN: a wrong key ends the call instead of replaying the menu.
          call.state = 'leaving';
          await hangup(call);
          return;
        }
        call.state = 'wrong-key';
        await play(call, 'sound:beeperr', () => guarded(call.id, menu(call)));
    }
  }

  function onPlaybackFinished(playback) {
    for (const call of calls.values()) {
      if (call.playback !== playback.id) continue;
      call.playback = undefined;
      const next = call.afterPlayback;
      call.afterPlayback = undefined;
      next?.();
    }
  }

  async function hangup(call) {
    forget(call.id);
    await ari.request('DELETE', `/channels/${call.id}`, { reason: 'normal' }).catch(() => undefined);
  }

  function forget(id) {
    const call = calls.get(id);
    if (call) clearTimeout(call.timer);
    calls.delete(id);
  }

  // The queue-like application: a holding bridge, a thank-you, then a hold tone until someone hangs up.
  async function enqueue(id) {
    queueBridge ??= ari.request('POST', '/bridges', { type: 'holding', name: 'support-queue' });
    // A failed creation is not kept: the next caller tries again.
    const bridge = await queueBridge.catch((err) => {
      queueBridge = undefined;
      throw err;
    });
    await ari.request('POST', `/bridges/${bridge.id}/addChannel`, { channel: id, role: 'participant' });
    await ari.request('POST', `/channels/${id}/play`, { media: 'sound:queue-thankyou,tone:440/1000,0/1000' });
  }

  return { stop: () => ari.close() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await startIvr(ariFromEnv(), { broken: process.env.IVR_BROKEN === '1' });
  console.log('ivr-demo is waiting for calls (Stasis(ivr-demo)); Ctrl-C to stop');
}
