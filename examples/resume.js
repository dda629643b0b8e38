// An ari-client application that loses no event when its WebSocket drops (see docs/events-resume.md).
//
// ari-client knows nothing of Patchbay's event sequencing, and reconnects by itself to the URL it
// built once. So the app asks for acknowledged delivery (ack=true, added to the URL through the
// application name, which ari-client puts in the query as it is), acknowledges each event once
// handled, and skips any event whose sequence it has already handled (after a reconnect the server
// re-sends what was not acknowledged: at-least-once, made exactly-once here). Calls that arrive
// while it is away wait for it (an ack connection is resumable) and get StasisStart on reconnect.
//
// Run it beside a running Patchbay: `node examples/resume.js`, then e.g.
//   curl -u asterisk:asterisk -X POST 'http://127.0.0.1:8088/ari/events/user/hello?application=resume-app'
import ari from 'ari-client';

const url = process.env.ARI_URL ?? 'http://127.0.0.1:8088';
const app = process.env.ARI_APP ?? 'resume-app';

const client = await ari.connect(url, process.env.ARI_USER ?? 'asterisk', process.env.ARI_PASSWORD ?? 'asterisk');

/** The sequence of the last event handled (kept in memory; store it to survive a restart of this process). */
let lastHandled = 0;

const handlers = {
  async StasisStart(event, channel) {
    console.log(`call ${channel.id} entered (args: ${event.args.join(',')})`);
    await channel.answer();
  },
  ChannelUserevent(event) {
    console.log(`user event ${event.eventname}`);
  },
  StasisEnd(event, channel) {
    console.log(`call ${channel.id} left`);
  },
};

// One listener for every event: ari-client calls type listeners for every message, duplicates
// included, so the de-duplication happens here before the app's own handlers run. Events are
// handled one after the other, so that acknowledgements (cumulative) go out in order.
let queue = Promise.resolve();
client.on('*', (event, resources) => {
  queue = queue.then(() => handle(event, resources));
});

async function handle(event, resources) {
  if (event.type === 'EventsLost') {
    // The server no longer holds some events: reconcile state through REST (e.g. GET /channels).
    console.log(`lost events ${event.from_sequence}..${event.to_sequence ?? '?'} (${event.reason})`);
    // After unknown_sequence the server numbers anew; after expired it carries on after the gap.
    lastHandled = event.reason === 'unknown_sequence' ? 0 : event.to_sequence;
    return;
  }
  if (typeof event.sequence !== 'number') return; // about the connection (ApplicationReplaced, RESTResponse)
  if (event.sequence <= lastHandled) return; // re-sent after a reconnect, already handled
  lastHandled = event.sequence;
  try {
    await handlers[event.type]?.(event, resources);
  } catch (err) {
    console.error(`${event.type} failed: ${err.message}`);
  }
  // Acknowledge: every event up to this one is handled. If the socket is down, the next
  // connection re-sends from the last acknowledgement the server got, and the check above skips it.
  if (client._ws?.readyState === 1) client._ws.send(JSON.stringify({ type: 'Ack', application: app, sequence: event.sequence }));
}

client.on('WebSocketReconnecting', () => console.log('connection lost; reconnecting'));
client.on('WebSocketConnected', () => console.log(`connected (last handled event ${lastHandled})`));

// `&ack=true` rides in the query ari-client builds from the application name.
await client.start(`${app}&ack=true`);
console.log(`resume-app is waiting for events of ${app}; Ctrl-C to stop`);
