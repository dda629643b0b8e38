// The main thread's side of a stream that runs in a media worker: what the SIP call holds
// (CallRtpStream), as if the stream were here. Frames to send are copied into the shared ring the
// worker empties at each of its ticks; received frames are taken from the other ring, one per
// main media clock tick (pool.ts calls deliver()), so the channel sees them paced as before;
// statistics and jitter figures are read from the shared figures the worker rewrites every tick.
// Control goes as messages. Per frame nothing is allocated. The stream can also have its worker
// play a shared sound by itself (playSound, the playback fast path): no frame crosses meanwhile.
// Or its audio can be mixed with other streams' in a worker (mixWith, a bridge of three or more):
// no frame crosses then either. Or its worker can write a recording of its received audio
// (record, the recording fast path, worker-recorder.ts): no frame crosses meanwhile either.
import type { Frame, SampleRate } from '../frame.ts';
import type { MixHandle } from '../mix.ts';
import type { CallRtpStream, JitterFigures } from '../rtp/call-stream.ts';
import { readRtpStatistics, type RtpStatistics } from '../rtp/statistics.ts';
import type { RtpStreamTotals, StreamParameters } from '../rtp/stream.ts';
import { FrameCache } from './frame-ring.ts';
import type { ToWorker } from './protocol.ts';
import { FIGURE, type StreamMemory } from './stream-memory.ts';
import type { SharedSound, SoundPlayback } from '../shared-sound.ts';
import { RemoteSoundPlay } from './sound-player.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../recording-writer.ts';
import { RemoteRecorder, type RecordEnd } from './worker-recorder.ts';
import { workerSrtpKeys } from './worker-srtp.ts';
import type { RemoteSecureMedia } from './remote-secure-media.ts';

/**
 * Received frames the main thread lets wait at an on-time tick before it drops the oldest, to bound
 * the delay after a stall longer than its clock's catch-up burst (whose ticks take the frames that
 * waited, one each, as the main thread's own streams do).
 */
const MAX_RECEIVED_BACKLOG = 3;

export interface RemoteStreamEvents {
  onFrame(frame: Frame): void;
  onDigit(digit: string, durationMs: number): void;
  onStranger?(address: string, port: number): void;
  onUnanswered?(address: string, port: number): void;
  /** The stream closed as asked; `rtt` (seconds) when RTCP measured a round trip. */
  onClosed?(rtt: number | undefined): void;
  /** The stream ended without being asked: its worker died, or the stream failed there. */
  onLost(reason: string): void;
}

/** What the stream needs of its worker. */
export interface StreamLink {
  post(message: ToWorker): void;
  /** The stream stops (or resumes) taking received frames at each main tick. */
  setDraining(stream: RemoteRtpStream, draining: boolean): void;
  /** The stream ended (closed or lost): it no longer counts towards its worker's load. */
  ended(stream: RemoteRtpStream): void;
  /** Mixes the streams' audio in a worker (pool.ts chooses which); undefined when they cannot be. */
  mix(streams: readonly RemoteRtpStream[], rate: SampleRate): MixHandle | undefined;
}

export class RemoteRtpStream implements CallRtpStream, JitterFigures {
  readonly socket = undefined;
  #parameters: StreamParameters | undefined;
  #closed = false;
  #looping = false;
  /** The stream of the same worker this one's received audio goes to (a two-party relay), if any. */
  #relayingTo: RemoteRtpStream | undefined;
  /** Its audio goes into a worker mix now (in its own worker or another's). */
  #mixed = false;
  readonly #frames = new FrameCache();
  /** The sound the worker plays by itself now, and the number of the last play. */
  #sound: RemoteSoundPlay | undefined;
  #plays = 0;
  /** The recording the worker writes now, and those taken back whose file the worker has not closed yet. */
  #recorder: RemoteRecorder | undefined;
  readonly #recorders = new Set<RemoteRecorder>();
  #records = 0;
  /** Strict-RTP and SRTP counts already added to the totals. */
  #countedStrangers = 0;
  #countedReports = 0;
  #countedRefused = 0;

  constructor(
    readonly id: number,
    readonly localPort: number,
    readonly workerIndex: number,
    private readonly memory: StreamMemory,
    private readonly link: StreamLink,
    private readonly events: RemoteStreamEvents,
    private readonly totals: RtpStreamTotals | undefined,
    /** A WebRTC call's: the DTLS handshake here, ICE-lite and SRTP in the worker (remote-secure-media.ts). */
    readonly secure?: RemoteSecureMedia,
    host = '0.0.0.0',
  ) {
    secure?.attach(id, host, (message) => link.post(message));
  }

  get parameters(): StreamParameters | undefined {
    return this.#parameters;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get jitterBuffer(): JitterFigures | undefined {
    return !this.#closed && this.memory.figures[FIGURE.jitterBuffer] === 1 ? this : undefined;
  }

  get late(): number {
    return this.memory.figures[FIGURE.late];
  }

  get concealed(): number {
    return this.memory.figures[FIGURE.concealed];
  }

  get targetDelayMs(): number {
    return this.memory.figures[FIGURE.targetDelayMs];
  }

  configure(parameters: StreamParameters): void {
    // SDES-SRTP crosses as its master keys (the worker keys a session of its own); any other protection cannot.
    const { protection, ...plain } = parameters;
    const srtp = workerSrtpKeys(protection);
    if (srtp === false) throw new Error('this protection of RTP cannot run in a media worker');
    if (this.#closed) return;
    this.#parameters = parameters;
    this.link.post({ type: 'configure', id: this.id, parameters: plain, ...(srtp ? { srtp } : {}) });
  }

  writeFrame(frame: Frame): void {
    if (!this.#closed && !this.#looping) this.memory.toSend.push(frame.rate, frame.samples);
  }

  sendDigit(digit: string, durationMs: number): boolean {
    if (this.#closed) return false;
    if (this.#parameters?.telephoneEventPt === undefined && !this.#parameters?.inbandDtmf) return false;
    this.link.post({ type: 'digit', id: this.id, digit, durationMs });
    return true;
  }

  statistics(): RtpStatistics | undefined {
    const figures = this.memory.figures;
    if (this.#closed || figures[FIGURE.hasStatistics] !== 1) return undefined;
    return readRtpStatistics(figures, FIGURE.statistics);
  }

  loopAudio(on: boolean): boolean {
    if (this.#closed || this.#relayingTo || this.#mixed) return false;
    if (on === this.#looping) return true;
    this.#looping = on;
    this.link.setDraining(this, !on && !this.#sound);
    this.link.post({ type: 'loop', id: this.id, on });
    return true;
  }

  /**
   * This stream's received audio goes to `peer`'s far end inside their worker, and no frame
   * reaches the call (one direction of a two-party relay); undefined: back to the call. False when
   * it cannot: `peer` is not a live stream of the same worker, or this one loops (Echo()).
   */
  relayTo(peer: CallRtpStream | undefined): boolean {
    if (this.#closed || this.#looping || this.#mixed) return false;
    if (peer === undefined) {
      if (!this.#relayingTo) return true;
      this.#relayingTo = undefined;
      // What waits in the ring was received before the relay began: stale, not to be heard now.
      while (this.memory.received.skip());
      this.link.setDraining(this, true);
      this.link.post({ type: 'relay', id: this.id });
      return true;
    }
    if (!(peer instanceof RemoteRtpStream) || peer === this || peer.closed || peer.workerIndex !== this.workerIndex) return false;
    if (this.#relayingTo === peer) return true;
    this.#relayingTo = peer;
    this.link.setDraining(this, false);
    this.link.post({ type: 'relay', id: this.id, to: peer.id });
    return true;
  }

  /**
   * The worker plays `sound` from sample `from` by itself, one frame per tick, until it ends
   * (`ended` is called), or the returned play is stopped; received audio stays in the worker
   * meanwhile (nothing listens to it). Undefined when the stream cannot (closed, looping or relaying).
   */
  playSound(sound: SharedSound, from: number, paused: boolean, ended: () => void): SoundPlayback | undefined {
    if (this.#closed || this.#looping || this.#relayingTo || this.#mixed) return undefined;
    this.#sound?.stop();
    this.#plays = (this.#plays + 1) | 0;
    const play = new RemoteSoundPlay(this.#plays, sound.length, from, paused, ended, (over) => {
      if (this.#sound !== over) return;
      this.#sound = undefined;
      if (!this.#closed && !this.#looping && !this.#relayingTo) this.link.setDraining(this, true);
    });
    this.#sound = play;
    this.link.setDraining(this, false);
    this.link.post({ type: 'sound', id: this.id, play: play.play, sound: sound.buffer, rate: sound.rate, control: play.control });
    return play;
  }

  /**
   * Mixes this stream's audio with the others' (a bridge of three or more, `members` including this
   * one) in the worker holding most of them, each hearing the rest; no frame reaches the calls
   * meanwhile. Undefined when they cannot be: a member is not a live stream of these workers, or is
   * busy otherwise (looping, relayed, playing a sound, in another mix).
   */
  mixWith(members: readonly CallRtpStream[], rate: SampleRate): MixHandle | undefined {
    const streams: RemoteRtpStream[] = [];
    for (const member of members) {
      if (!(member instanceof RemoteRtpStream) || !member.free) return undefined;
      streams.push(member);
    }
    return streams.includes(this) ? this.link.mix(streams, rate) : undefined;
  }

  /** Open, and its audio not taken by anything in its worker (a loop, a relay, a sound, a mix, a recording). */
  get free(): boolean {
    return !this.#closed && !this.#looping && !this.#relayingTo && !this.#sound && !this.#mixed && !this.#recorder;
  }

  /**
   * The worker writes the stream's received audio into the recording's file from its next tick (the
   * recording fast path), and no frame reaches the call meanwhile; `ended` says when and why it
   * came back. Undefined when the stream's audio is taken otherwise (see free).
   */
  record(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    if (!this.free || !handover.release()) return undefined;
    this.#records = (this.#records + 1) | 0;
    const recorder = new RemoteRecorder(this.#records, handover.progress, handover.paused, handover.muted, ended, (over) => {
      if (over.over) this.#recorders.delete(over);
      if (this.#recorder !== over) return;
      this.#recorder = undefined;
      // Received frames reach the call again from the next one: the main thread goes on with the recording.
      if (!this.#closed && !this.#looping && !this.#relayingTo && !this.#sound && !this.#mixed) this.link.setDraining(this, true);
    });
    this.#recorder = recorder;
    this.#recorders.add(recorder);
    // No frame is taken here from now on: the worker takes what waits in the ring into the recording (its first tick's frame).
    this.link.setDraining(this, false);
    const { file, formatName: format, maxDurationSamples, maxSilenceMs, progress } = handover;
    this.link.post({ type: 'record', id: this.id, record: recorder.record, file, format, maxDurationSamples, maxSilenceMs, progress, control: recorder.control });
    return recorder;
  }

  /** The worker closed the file of recording `message.record` (taken back, or ended there). */
  recordEnded(message: RecordEnd): void {
    for (const recorder of this.#recorders) {
      if (recorder.record !== message.record) continue;
      recorder.ended(message);
      return;
    }
  }

  /** The pool put the stream in a worker mix: its frames stay in the workers. */
  enterMix(): void {
    this.#mixed = true;
    this.link.setDraining(this, false);
  }

  /** Its worker mix ended: received frames reach the call again from the next one (nothing stale). */
  leaveMix(): void {
    if (!this.#mixed) return;
    this.#mixed = false;
    if (this.#closed) return;
    while (this.memory.received.skip());
    if (!this.#looping && !this.#sound) this.link.setDraining(this, true);
  }

  /** The worker played sound `play` to its end. */
  soundEnded(play: number): void {
    if (this.#sound?.play === play) this.#sound.ended();
  }

  close(): void {
    if (this.#closed) return;
    this.#end();
    this.link.post({ type: 'close', id: this.id });
  }

  /**
   * Each main media clock tick: the next received frame to the call. The ticks of a catch-up burst
   * (`catchingUp`) take what waited during the stall one each; what still waits at the next on-time
   * tick beyond MAX_RECEIVED_BACKLOG is cut (a stall longer than the burst).
   */
  deliver(catchingUp = false): void {
    if (this.#closed) return;
    const ring = this.memory.received;
    if (!catchingUp) while (ring.size > MAX_RECEIVED_BACKLOG) ring.skip();
    const frame = ring.pop(this.#frames);
    if (frame) this.events.onFrame(frame);
  }

  /** What GET /metrics counts of the stream, brought into the totals (read when scraped). */
  syncTotals(): void {
    const totals = this.totals;
    if (!totals) return;
    const figures = this.memory.figures;
    totals.strangerPackets += figures[FIGURE.strangerPackets] - this.#countedStrangers;
    totals.strangerReports += figures[FIGURE.strangerReports] - this.#countedReports;
    totals.srtpRefusedPackets += figures[FIGURE.srtpRefusedPackets] - this.#countedRefused;
    this.#countedStrangers = figures[FIGURE.strangerPackets];
    this.#countedReports = figures[FIGURE.strangerReports];
    this.#countedRefused = figures[FIGURE.srtpRefusedPackets];
  }

  /** A rare event from the worker. */
  digit(digit: string, durationMs: number): void {
    if (!this.#closed) this.events.onDigit(digit, durationMs);
  }

  stranger(address: string, port: number): void {
    if (!this.#closed) this.events.onStranger?.(address, port);
  }

  unanswered(address: string, port: number): void {
    if (!this.#closed) this.events.onUnanswered?.(address, port);
  }

  /** The worker closed the stream: as asked, or on its own (a failure there, which ends the call). */
  closedByWorker(rtt: number | undefined): void {
    // A recording whose end the worker did not report (it closes files before the stream) is over all the same.
    this.#loseRecorders('the media stream closed');
    if (this.#closed) {
      this.events.onClosed?.(rtt);
      return;
    }
    this.lost('the media stream failed in its worker');
  }

  /** The stream is gone with its worker. */
  lost(reason: string): void {
    this.#loseRecorders(reason);
    if (this.#closed) return;
    this.#end();
    this.events.onLost(reason);
  }

  /** A recording's file is open in the worker (written, or being closed there). */
  get recording(): boolean {
    return this.#recorders.size > 0;
  }

  /** The worker is gone without a word (the pool stopped): its recordings hold what it flushed. */
  loseRecordings(reason: string): void {
    this.#loseRecorders(reason);
  }

  #loseRecorders(reason: string): void {
    for (const recorder of [...this.#recorders]) recorder.lost(reason);
    this.#recorders.clear();
    this.#recorder = undefined;
  }

  #end(): void {
    this.#closed = true;
    this.secure?.close();
    this.#relayingTo = undefined;
    this.#mixed = false;
    this.#sound?.abandon();
    this.link.setDraining(this, false);
    this.link.ended(this);
    this.syncTotals();
    const totals = this.totals;
    const figures = this.memory.figures;
    if (totals && figures[FIGURE.jitterBuffer] === 1) {
      totals.latePackets += figures[FIGURE.late];
      totals.concealedFrames += figures[FIGURE.concealed];
    }
  }
}
