// An example "echo bot" on ARI: it answers, beeps, then listens; when the caller stops talking
// (1 s of silence) it says back what it heard, and listens again. A voice bot's turn-taking in a
// few lines, to measure turn latency with virtual callers (scenarios/echo-bot.yaml).
//   node examples/voice-apps/echo-bot.js   beside a Patchbay whose dialplan sends calls to Stasis(echo-bot)
import { ariFromEnv, connectAri } from './ari.js';

/** Shorter than this, a recording was silence only: listen again without answering. */
const MIN_TALK_MS = 200;

export async function startEchoBot(options = ariFromEnv()) {
  const turns = new Map();
  const recordingOf = new Map();

  const ari = await connectAri({ ...options, apps: ['echo-bot'] }, (event) => {
    if (event.type === 'StasisStart') void start(event.channel.id);
    else if (event.type === 'RecordingFinished') void answer(event.recording);
    else if (event.type === 'PlaybackFinished' && event.playback.target_uri?.startsWith('channel:')) void listen(event.playback.target_uri.slice('channel:'.length));
    else if (event.type === 'StasisEnd') turns.delete(event.channel.id);
  });

  async function start(id) {
    turns.set(id, 0);
    try {
      await ari.request('POST', `/channels/${id}/answer`);
      await ari.request('POST', `/channels/${id}/play`, { media: 'sound:beep' });
    } catch (err) {
      console.error(`call ${id}:`, err.message);
    }
  }

  async function listen(id) {
    if (!turns.has(id)) return;
    const turn = turns.get(id) + 1;
    turns.set(id, turn);
    const name = `echo-bot-${id}-${turn}`;
    recordingOf.set(name, id);
    await ari
      .request('POST', `/channels/${id}/record`, { name, format: 'wav', maxSilenceSeconds: '1', maxDurationSeconds: '30', ifExists: 'overwrite', terminateOn: 'none' })
      .catch(() => undefined);
  }

  async function answer(recording) {
    const id = recordingOf.get(recording.name);
    recordingOf.delete(recording.name);
    if (!id || !turns.has(id)) return;
    if ((recording.talking_duration ?? recording.duration ?? 0) * 1000 < MIN_TALK_MS) return listen(id);
    await ari.request('POST', `/channels/${id}/play`, { media: `recording:${recording.name}` }).catch(() => undefined);
  }

  return { stop: () => ari.close() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await startEchoBot();
  console.log('echo-bot is waiting for calls (Stasis(echo-bot)); Ctrl-C to stop');
}
