// What the SIPp suites of the media workers share: their skip reason, waiting until the workers
// run (a call placed before runs on the main thread, and the suites want it in a worker), a call whose SDP names the test's own socket (call-sdp-elsewhere.xml: the test
// hears what the server sends), and the Stasis channel of such a call, failing with what SIPp said.
import dgram from 'node:dgram';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, waitFor, type Json } from './sipp-peer.ts';

/** The `skip` of a suite that needs SIPp and sox. */
export const NO_SIPP_OR_SOX: string | false = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;

/** Waits (at most 60 s) until every media worker of the server runs. */
export async function waitForWorkers(server: TestServer, what = 'the media worker to load'): Promise<void> {
  await waitFor(what, () => (server.core.pjsip.mediaWorkers?.loads().every((load) => load.running) ? true : undefined), 60_000);
}

/** A SIPp call whose SDP names `socket`, so what the server sends reaches the test, not SIPp. */
export interface SdpElsewhereCall {
  readonly run: ReturnType<typeof sipp>;
  readonly socket: dgram.Socket;
  /** The u-law payloads (PCMU packets) the server sent to the socket, when they are collected. */
  readonly heard: Buffer[];
}

/**
 * SIPp calls `exten` as `caller` from `work` (where audio.wav is), streaming from a media port of its
 * own; `collect` keeps the u-law payloads the server sends in `heard`.
 */
export async function callSdpElsewhere(target: string, work: string, exten: string, caller: string, options: { readonly timeoutMs: number; readonly collect?: boolean }): Promise<SdpElsewhereCall> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const heard: Buffer[] = [];
  if (options.collect) {
    socket.on('message', (packet) => {
      if (packet.length > 12 && (packet[1] & 0x7f) === 0) heard.push(Buffer.from(packet.subarray(12)));
    });
  }
  const mediaPort = 2 * Math.floor(randomPort() / 2);
  const run = sipp('call-sdp-elsewhere.xml', [target, '-s', exten, '-set', 'caller', caller, '-set', 'sdp_port', String(socket.address().port), '-mp', String(mediaPort)], { cwd: work, timeoutMs: options.timeoutMs });
  return { run, socket, heard };
}

/** The channel a SIPp call put into Stasis; a call that never arrives fails with what SIPp said (a port taken on a busy machine…). */
export async function stasisChannelOf(events: EventSocket, run: ReturnType<typeof sipp>, match: (event: Json) => boolean = (event) => event.type === 'StasisStart'): Promise<string> {
  let exited: string | undefined;
  void run.done.then((result) => (exited = `SIPp exited ${result.status}: ${result.output.slice(-600)}`));
  try {
    const start: Json = await nextEvent(events, match, 30_000);
    return start.channel.id as string;
  } catch (error) {
    throw new Error(`no StasisStart (${exited ?? 'SIPp still running'})`, { cause: error });
  }
}
