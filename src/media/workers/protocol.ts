// The messages between the main thread and a media worker: control and rare events only (frames
// and figures go through shared memory, stream-memory.ts). A stream is named by a number the main
// thread gives it.
import type { StreamParameters } from '../rtp/stream.ts';
import type { SoundStart } from './sound-player.ts';
import type { RecordEnd, RecordStart } from './worker-recorder.ts';
import type { WorkerSrtpKeys } from './worker-srtp.ts';
import type { IceCredentials } from '../webrtc/ice-lite.ts';

/** How the technology configured the stream (StreamOptions without what cannot cross threads). */
export interface WorkerStreamOptions {
  readonly rtcpIntervalMs?: number;
  readonly jitterBuffer?: { readonly minDelayMs: number; readonly maxDelayMs: number };
  readonly strictRtp?: boolean;
  readonly probation?: number;
  readonly symmetric?: boolean;
}

/** StreamParameters as they cross: the protection goes as its keys beside them (worker-srtp.ts). */
export type WorkerStreamParameters = Omit<StreamParameters, 'protection'>;

export type ToWorker =
  | {
      readonly type: 'open';
      readonly id: number;
      readonly host: string;
      readonly portStart: number;
      readonly portEnd: number;
      readonly options: WorkerStreamOptions;
      readonly memory: SharedArrayBuffer;
      /** The longest frame `memory`'s received ring holds (stream-memory.ts); absent: a 48 kHz frame's. */
      readonly receivedSamples?: number;
      /** A WebRTC call's stream (worker-secure-socket.ts): the ICE credentials our SDP carries. */
      readonly secure?: IceCredentials;
    }
  /** `srtp`: the SDES master keys agreed (the only message that carries them); without it, plain RTP. */
  | { readonly type: 'configure'; readonly id: number; readonly parameters: WorkerStreamParameters; readonly srtp?: WorkerSrtpKeys }
  | { readonly type: 'digit'; readonly id: number; readonly digit: string; readonly durationMs: number }
  /** WebRTC: the far end's a=ice-ufrag; a DTLS record of the main thread's handshake to send; the keys it exported. */
  | { readonly type: 'ice-remote'; readonly id: number; readonly ufrag?: string }
  | { readonly type: 'dtls-out'; readonly id: number; readonly record: Uint8Array }
  | { readonly type: 'srtp-keys'; readonly id: number; readonly srtp: WorkerSrtpKeys }
  | { readonly type: 'loop'; readonly id: number; readonly on: boolean }
  /** The stream's received audio goes to stream `to`'s far end in the worker (a two-party relay); without `to`, to the main thread again. */
  | { readonly type: 'relay'; readonly id: number; readonly to?: number }
  | { readonly type: 'close'; readonly id: number }
  /** The playback fast path: the worker plays a shared sound on the stream by itself (sound-player.ts). */
  | ({ readonly type: 'sound'; readonly id: number } & SoundStart)
  /** The recording fast path: the worker writes the stream's received audio into a recording's file (worker-recorder.ts). */
  | ({ readonly type: 'record'; readonly id: number } & RecordStart)
  /** A bridge mixed in this worker (worker-mix.ts): its members' streams here by id, those of other workers by their MixLegMemory. */
  | { readonly type: 'mix'; readonly mix: number; readonly rate: number; readonly members: readonly WorkerMixMember[] }
  | { readonly type: 'mix-end'; readonly mix: number }
  /** A recording of a bridge mixed in this worker: the mix (everyone, clipped) written into its file at each tick. */
  | ({ readonly type: 'mix-record'; readonly mix: number } & RecordStart)
  /** The stream's audio goes to a mix in another worker and what it hears comes back, through `memory` (a MixLegMemory); without it, to the main thread again. */
  | { readonly type: 'mix-leg'; readonly id: number; readonly memory?: SharedArrayBuffer };

/** A member of a worker mix: a stream of the mixing worker, or the shared memory of one on another worker. */
export type WorkerMixMember = { readonly id: number } | { readonly memory: SharedArrayBuffer };

export type FromWorker =
  /** The worker has loaded and takes streams. */
  | { readonly type: 'ready' }
  | { readonly type: 'opened'; readonly id: number; readonly port: number }
  | { readonly type: 'open-failed'; readonly id: number; readonly reason: string }
  | { readonly type: 'digit'; readonly id: number; readonly digit: string; readonly durationMs: number }
  | { readonly type: 'stranger'; readonly id: number; readonly address: string; readonly port: number }
  | { readonly type: 'unanswered'; readonly id: number; readonly address: string; readonly port: number }
  /** WebRTC: a DTLS record from the checked pair, for the main thread's handshake; the checked pair or its consent changed. */
  | { readonly type: 'dtls-in'; readonly id: number; readonly record: Uint8Array }
  | { readonly type: 'ice'; readonly id: number; readonly selected?: { readonly address: string; readonly port: number }; readonly consented: boolean }
  /** The stream closed; `rtt` when RTCP measured a round trip (seconds). */
  | { readonly type: 'closed'; readonly id: number; readonly rtt?: number }
  | { readonly type: 'load'; readonly load: WorkerLoadReport }
  /** What the worker's console printed (its stdio is not read by the main thread: see spawnMediaWorker). */
  | { readonly type: 'console'; readonly text: string }
  /** A sound the worker played (`play` of the stream's plays) reached its end. */
  | { readonly type: 'sound-ended'; readonly id: number; readonly play: number }
  /** A recording the worker wrote is over there: taken back or ended, its file closed. */
  | ({ readonly type: 'record-ended'; readonly id: number } & RecordEnd)
  /** A recording of a mix the worker wrote is over there (taken back when the mix ended, or ended there). */
  | ({ readonly type: 'mix-record-ended'; readonly mix: number } & RecordEnd);

/** What a worker reports of itself once a second. */
export interface WorkerLoadReport {
  readonly streams: number;
  /** RTP packets received and sent per second over the last report's interval. */
  readonly packetsInPerSecond: number;
  readonly packetsOutPerSecond: number;
  /** Its event loop's utilisation over that interval, 0–1 (performance.eventLoopUtilization). */
  readonly utilization: number;
  /** CPU its thread used over that interval, in cores (0.5 = half a core); −1 where the system does not say (not Linux). */
  readonly cpu: number;
  /** Frames dropped because a ring was full, since the worker started. */
  readonly ringDrops: number;
  /** Streams whose received audio the worker relays to another of its streams now (two-party relay). */
  readonly relayedStreams?: number;
  /** Streams of this worker whose audio a worker mix takes now (mixed here, or crossing to another worker's mix). */
  readonly mixedStreams?: number;
  /** Bridges this worker mixes now. */
  readonly mixes?: number;
  /** Recordings this worker writes now. */
  readonly recordings?: number;
  /** This worker's V8 heap, used and reserved, in bytes (v8.getHeapStatistics in the worker: the main thread cannot read another isolate's). */
  readonly heapUsedBytes?: number;
  readonly heapTotalBytes?: number;
}
