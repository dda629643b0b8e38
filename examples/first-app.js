// A first ARI application: answers the call, plays a prompt, records three seconds and hangs up.
// Run it with `node examples/first-app.js` beside a running Patchbay (`npm start`), then send it a
// call (see "Your first app" in README.md). It uses the npm `ari-client` library, unchanged.
import ari from 'ari-client';

const url = process.env.ARI_URL ?? 'http://127.0.0.1:8088';
const client = await ari.connect(url, 'asterisk', 'asterisk');

client.on('StasisStart', async (event, channel) => {
  console.log(`call from ${channel.name} (args: ${event.args.join(', ')})`);
  try {
    await channel.answer();
    console.log('answered');

    const playback = client.Playback();
    const played = new Promise((resolve) => playback.once('PlaybackFinished', resolve));
    await channel.play({ media: 'sound:hello-world' }, playback);
    await played;
    console.log('played sound:hello-world');

    const recording = client.LiveRecording();
    const recorded = new Promise((resolve) => recording.once('RecordingFinished', resolve));
    await channel.record({ format: 'wav', maxDurationSeconds: 3, ifExists: 'overwrite', beep: true }, recording);
    console.log('recording 3 seconds…');
    await recorded;
    // The server keeps it where its configuration says (dirs.recordings); ARI serves the file.
    const stored = await client.recordings.getStored({ recordingName: recording.name });
    console.log(`recorded ${stored.name}.${stored.format}: ${url}/ari/recordings/stored/${stored.name}/file`);

    await channel.hangup();
    console.log('hung up');
  } catch (err) {
    console.error('call failed:', err.message);
  }
});

// The embedded dialplan's extension 1000 hands calls to "test-app".
client.start('test-app');
console.log('first-app is waiting for calls to test-app; Ctrl-C to stop');
