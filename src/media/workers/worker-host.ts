// The streams one media worker runs: each an RtpStream (sockets, strict-RTP source learning,
// jitter buffer, coders, RTCP, DTMF both ways) on the worker's own media clock. At each tick the
// frames the main thread wrote are sent, and every stream's figures are rewritten in its shared
// memory; received audio goes to the main thread's ring, or straight back to the far end while
// the stream loops (Echo()). While the worker plays a sound by itself (sound-player.ts, the playback
// fast path) it sends one frame of it per tick, and received audio, which nothing on the main
// thread listens to then, is not handed over — nor decoded: the stream skips its audio
// (RtpStream.skipAudio) and only counts it, until the sound ends or is taken back.
// Only rare things are messages: a digit, a stranger, a pause, a close, a sound's start and end.
// Per frame nothing is allocated: frames are copied into and out of preallocated slots.
// A two-party relay (relay messages) sends one stream's audio to another stream of this worker, so
// a bridged pair of calls costs the main thread nothing per frame: the packets as they are when
// both streams send the same codec (RtpStream.relayPacketsTo), else the decoded audio re-encoded
// by the other stream's sender (its own SSRC, sequence and timestamps); a frame the main thread
// writes for a stream that tick wins over the relayed one (a prompt played while the relay winds down).
// A bridge of three or more can be mixed here too (mix messages, worker-mix.ts): its members' decoded
// audio goes into one sum at each tick and each hears the rest, the members of other workers crossing
// through shared rings (mix-leg messages on their side); a frame the main thread wrote wins there too.
// A recording of a stream's received audio can be written here too (record messages,
// worker-recorder.ts): each tick writes 20 ms into its file until the main thread takes it back.
import { MediaClock } from '../clock.ts';
import { isSampleRate, samplesPerFrame, type Frame, type SampleRate } from '../frame.ts';
import { RtpPortRange } from '../rtp/port-range.ts';
import { RtpStream, type StreamClock } from '../rtp/stream.ts';
import { FrameCache } from './frame-ring.ts';
import type { FromWorker, ToWorker, WorkerLoadReport } from './protocol.ts';
import { MixLegMemory } from './mix-leg-memory.ts';
import { LocalParty, MixLeg, RemoteParty, WorkerMix, type MixParty } from './worker-mix.ts';
import { FIGURE, StreamMemory } from './stream-memory.ts';
import { WorkerSoundPlayer } from './sound-player.ts';
import { WorkerRecorder, type RecordEnd } from './worker-recorder.ts';
import type { SrtpSession } from '../srtp/session.ts';
import { keyedSession } from './worker-srtp.ts';
import { isIceCredentials, WorkerSecureSocket } from './worker-secure-socket.ts';

interface HostedStream {
  readonly id: number;
  readonly stream: RtpStream;
  readonly memory: StreamMemory;
  readonly frames: FrameCache;
  looping: boolean;
  /** The stream its received audio goes to inside this worker (a two-party relay), instead of the main thread. */
  relayTo: HostedStream | undefined;
  /** The main thread wrote a frame for this stream this tick: it is sent, and a relayed frame for it is not. */
  mainWrote: boolean;
  /** The sound the worker plays on the stream by itself, if any. */
  sound: WorkerSoundPlayer | undefined;
  /** Its place in a bridge mixed in this worker: its decoded audio goes there instead of to the main thread. */
  mixParty: LocalParty | undefined;
  /** Its link to a bridge mixed in another worker: decoded audio goes there, and what it hears comes back. */
  mixLeg: MixLeg | undefined;
  /** The recording the worker writes of its received audio, if any. */
  recorder: WorkerRecorder | undefined;
  /** Its SDES-SRTP, keyed by what the main thread's offer/answer agreed (worker-srtp.ts). */
  srtp: SrtpSession | undefined;
  /** A WebRTC call's socket: ICE-lite here, DTLS on the main thread, SRTP keyed by it (worker-secure-socket.ts). */
  readonly secure: WorkerSecureSocket | undefined;
}

/** A bridge this worker mixes, and its members whose streams run here. */
interface HostedMix {
  readonly mix: WorkerMix;
  readonly locals: HostedStream[];
  /** A recording of the bridge written from the mix, and the frame the mix is clipped into for it. */
  recorder: WorkerRecorder | undefined;
  readonly mixed: { readonly rate: SampleRate; readonly samples: Int16Array };
}

/** More members than any bridge should have: a mix message naming more is refused (shared memory and messages are checked like packets). */
const MAX_MIX_MEMBERS = 1024;

/** How the host reaches the main thread. */
export type PostToMain = (message: FromWorker) => void;

export class MediaWorkerHost {
  readonly clock = new MediaClock();
  /** The clock as streams take it; the host's own listener was added first, so frames to send are taken before the streams tick. */
  readonly #streamClock: StreamClock;
  /** By id, and as an array the tick walks without an iterator. */
  readonly #byId = new Map<number, HostedStream>();
  #list: HostedStream[] = [];
  /** Port ranges by their bounds, each handing out its ports round-robin. */
  readonly #ranges = new Map<string, RtpPortRange>();
  /** Packets of streams already closed, so that per-second figures stay right when streams end. */
  #closedPacketsIn = 0;
  #closedPacketsOut = 0;
  #closedRingDrops = 0;
  #lastPacketsIn = 0;
  #lastPacketsOut = 0;
  /** The bridges mixed here, by the main thread's number, and as an array the tick walks. */
  readonly #mixes = new Map<number, HostedMix>();
  #mixList: HostedMix[] = [];

  constructor(
    private readonly post: PostToMain,
    /** False: received audio is decoded even while a sound plays and nothing reads it (the figures before issue 25's skip). */
    private readonly skipUnheardAudio = true,
  ) {
    const clock = this.clock;
    this.#streamClock = { get ticks() { return clock.ticks; }, get skippedTicks() { return clock.skippedTicks; }, onTick: (listener) => clock.add(listener), offTick: (listener) => clock.remove(listener) };
    this.clock.add(this.#tick);
    // The clock runs only while the worker holds a stream: an idle worker waking 50 times a second
    // cost the idle server about 10 ms of CPU a second per worker.
  }

  get streams(): number {
    return this.#list.length;
  }

  /**
   * A control message from the main thread. Unknown or stale ids are ignored (the stream may have
   * just closed). A stream that fails on one is closed (the main thread then ends its call), the
   * worker and its other calls go on.
   */
  handle(message: ToWorker): void {
    try {
      this.#handle(message);
    } catch {
      if (message.type !== 'open' && 'id' in message) this.#byId.get(message.id)?.stream.close();
    }
  }

  #handle(message: ToWorker): void {
    switch (message.type) {
      case 'open':
        void this.#open(message);
        return;
      case 'configure': {
        const hosted = this.#byId.get(message.id);
        if (!hosted) return;
        // A WebRTC stream's socket is its protection (keyed by DTLS); else SDES's keys, or none.
        hosted.srtp = hosted.secure ? undefined : keyedSession(hosted.srtp, message.srtp);
        const protection = hosted.secure ?? hosted.srtp;
        hosted.stream.configure(protection ? { ...message.parameters, protection } : message.parameters);
        // Inband DTMF turned on or off changes whether Echo() reflects, and so whether decoded audio is needed.
        this.#skipIfUnheard(hosted);
        return;
      }
      case 'digit':
        this.#byId.get(message.id)?.stream.sendDigit(message.digit, message.durationMs);
        return;
      case 'loop': {
        const hosted = this.#byId.get(message.id);
        if (!hosted) return;
        hosted.looping = message.on;
        // The packets' payloads go back as they are when nothing needs them decoded; else the decoded audio.
        hosted.stream.reflect(message.on);
        this.#skipIfUnheard(hosted);
        return;
      }
      case 'relay': {
        const hosted = this.#byId.get(message.id);
        if (!hosted) return;
        const to = message.to === undefined ? undefined : this.#byId.get(message.to);
        // A peer already gone (closed on its way here) leaves the audio with the main thread.
        hosted.relayTo = to !== hosted ? to : undefined;
        // Same codec both ways: the packets themselves pass (no decode, jitter buffer or encode); else decoded frames do.
        hosted.stream.relayPacketsTo(hosted.relayTo?.stream);
        return;
      }
      case 'close':
        this.#byId.get(message.id)?.stream.close();
        return;
      case 'ice-remote':
        this.#byId.get(message.id)?.secure?.setRemoteUfrag(message.ufrag);
        return;
      case 'dtls-out':
        this.#byId.get(message.id)?.secure?.sendRecord(message.record);
        return;
      case 'srtp-keys':
        this.#byId.get(message.id)?.secure?.key(message.srtp);
        return;
      case 'sound': {
        const hosted = this.#byId.get(message.id);
        // A new play replaces the one before (whose owner has stopped it already).
        if (!hosted) return;
        hosted.sound = new WorkerSoundPlayer(message);
        this.#skipIfUnheard(hosted);
        return;
      }
      case 'mix':
        this.#startMix(message);
        return;
      case 'mix-end':
        this.#endMix(message.mix);
        return;
      case 'record':
        this.#record(message);
        return;
      case 'mix-record':
        this.#startMixRecording(message);
        return;
      case 'mix-leg': {
        const hosted = this.#byId.get(message.id);
        if (hosted) hosted.mixLeg = message.memory ? new MixLeg(new MixLegMemory(message.memory)) : undefined;
        return;
      }
    }
  }

  async #open(message: Extract<ToWorker, { type: 'open' }>): Promise<void> {
    const { id, options } = message;
    let memory: StreamMemory;
    let sockets;
    try {
      memory = new StreamMemory(message.memory, message.receivedSamples);
      sockets = await this.#range(message.portStart, message.portEnd).bindPair(message.host);
    } catch (error) {
      this.post({ type: 'open-failed', id, reason: error instanceof Error ? error.message : String(error) });
      return;
    }
    const frames = new FrameCache();
    let hosted: HostedStream | undefined;
    let secure: WorkerSecureSocket | undefined;
    if (message.secure !== undefined) {
      if (!isIceCredentials(message.secure)) {
        sockets.rtp.close();
        sockets.rtcp.close();
        this.post({ type: 'open-failed', id, reason: 'open: ICE credentials that are not credentials' });
        return;
      }
      secure = new WorkerSecureSocket(sockets.rtp, message.secure, {
        dtls: (record) => this.post({ type: 'dtls-in', id, record }),
        ice: (selected, consented) => this.post({ type: 'ice', id, ...(selected ? { selected } : {}), consented }),
      });
    }
    const stream = new RtpStream(
      secure ?? sockets.rtp,
      this.#streamClock,
      {
        onFrame: (frame) => {
          // Looping: the decoded audio goes back, unless the packets themselves already do (reflect()).
          if (hosted?.looping) {
            if (!stream.reflecting) stream.writeFrame(frame);
          } else if (hosted?.relayTo) {
            const to = hosted.relayTo;
            if (!to.mainWrote && !to.looping) to.stream.writeFrame(frame);
          } else if (hosted?.mixParty) hosted.mixParty.put(frame);
          else if (hosted?.mixLeg) hosted.mixLeg.said(frame);
          else if (hosted?.recorder && !hosted.recorder.stopped) hosted.recorder.put(frame);
          else if (!hosted?.sound) memory.received.push(frame.rate, frame.samples);
        },
        onDigit: (digit, durationMs) => this.post({ type: 'digit', id, digit, durationMs }),
        onStranger: (address, port) => this.post({ type: 'stranger', id, address, port }),
        onUnanswered: (address, port) => this.post({ type: 'unanswered', id, address, port }),
        onClosed: () => this.#closed(id),
      },
      { ...options, rtcpSocket: sockets.rtcp },
    );
    hosted = { id, stream, memory, frames, looping: false, relayTo: undefined, mainWrote: false, sound: undefined, mixParty: undefined, mixLeg: undefined, recorder: undefined, srtp: undefined, secure };
    this.#byId.set(id, hosted);
    this.#list = [...this.#list, hosted];
    this.clock.start();
    this.post({ type: 'opened', id, port: stream.localPort });
  }

  #range(start: number, end: number): RtpPortRange {
    const key = `${start}-${end}`;
    let range = this.#ranges.get(key);
    if (!range) {
      range = new RtpPortRange(start, end);
      this.#ranges.set(key, range);
    }
    return range;
  }

  #closed(id: number): void {
    const hosted = this.#byId.get(id);
    if (!hosted) return;
    this.#writeFigures(hosted);
    const figures = hosted.memory.figures;
    this.#closedPacketsIn += figures[FIGURE.statistics + 1];
    this.#closedPacketsOut += figures[FIGURE.statistics];
    this.#closedRingDrops += hosted.memory.received.dropped + hosted.memory.toSend.dropped;
    // The file is closed before the stream's end is told, so the main thread finds it complete.
    if (hosted.recorder) this.#recordOver(hosted, hosted.recorder, 'taken-back');
    this.#byId.delete(id);
    this.#list = this.#list.filter((entry) => entry !== hosted);
    if (this.#list.length === 0) this.clock.stop();
    // Its relay partner's audio has nowhere to go in here any more: back to the main thread's ring.
    for (const entry of this.#list) {
      if (entry.relayTo !== hosted) continue;
      entry.relayTo = undefined;
      entry.stream.relayPacketsTo(undefined);
    }
    // Its mix goes on without it until the main thread settles the bridge anew.
    const party = hosted.mixParty;
    if (party) for (const entry of this.#mixes.values()) entry.mix.drop(party);
    const rtcp = hosted.stream.rtcp;
    this.post({ type: 'closed', id, ...(rtcp.rttSpread.count > 0 ? { rtt: rtcp.rtt } : {}) });
  }

  readonly #tick = (): void => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      const hosted = list[i];
      // What the main thread wrote since the last tick leaves now; while looping the far end hears itself only.
      let frame: Frame | undefined;
      hosted.mainWrote = false;
      while ((frame = hosted.memory.toSend.pop(hosted.frames)) !== undefined) {
        if (!hosted.looping) {
          hosted.stream.writeFrame(frame);
          hosted.mainWrote = true;
        }
      }
      // A sound's frame follows whatever the main thread wrote before handing it over, a tick later.
      if (hosted.sound && !hosted.mainWrote) this.#playSound(hosted, hosted.sound);
      if (hosted.mixLeg) {
        const heard = hosted.mixLeg.heard();
        if (heard && !hosted.mainWrote && !hosted.looping) hosted.stream.writeFrame(heard);
      }
      if (hosted.recorder) this.#recordTick(hosted, hosted.recorder);
      this.#writeFigures(hosted);
    }
    // After the frames the main thread wrote (which win), before the streams decode this tick's audio.
    const mixes = this.#mixList;
    for (let i = 0; i < mixes.length; i++) {
      const hosted = mixes[i];
      hosted.mix.tick();
      if (hosted.recorder) this.#recordMix(hosted, hosted.recorder);
    }
  };

  #startMix(message: Extract<ToWorker, { type: 'mix' }>): void {
    const { rate, members } = message;
    if (!isSampleRate(rate) || !Array.isArray(members) || members.length > MAX_MIX_MEMBERS || this.#mixes.has(message.mix)) return;
    // The other workers' memories first: one of the wrong size refuses the whole mix before any stream joins it.
    const remote = members.map((member) => ('memory' in member ? new MixLegMemory(member.memory) : undefined));
    const parties: MixParty[] = [];
    const locals: HostedStream[] = [];
    for (let i = 0; i < members.length; i++) {
      const member = members[i];
      const memory = remote[i];
      if (memory) {
        parties.push(new RemoteParty(rate, memory));
        continue;
      }
      if (!('id' in member)) continue;
      // A stream closed on its way here, or already in another mix, is left out.
      const hosted = this.#byId.get(member.id);
      if (!hosted || hosted.mixParty) continue;
      const party = new LocalParty(rate, (frame) => {
        if (!hosted.mainWrote && !hosted.looping) hosted.stream.writeFrame(frame);
      });
      hosted.mixParty = party;
      locals.push(hosted);
      parties.push(party);
    }
    const mix = new WorkerMix(message.mix, rate, parties);
    const hosted: HostedMix = { mix, locals, recorder: undefined, mixed: { rate, samples: new Int16Array(samplesPerFrame(rate)) } };
    this.#mixes.set(message.mix, hosted);
    this.#mixList = [...this.#mixList, hosted];
  }

  #endMix(id: number): void {
    const entry = this.#mixes.get(id);
    if (!entry) return;
    this.#mixes.delete(id);
    this.#mixList = this.#mixList.filter((hosted) => hosted !== entry);
    // The bridge mixes on the main thread again from its next tick, and its recording goes on there.
    if (entry.recorder) this.#mixRecordOver(entry, entry.recorder, 'taken-back');
    for (const hosted of entry.locals) {
      if (hosted.mixParty && entry.mix.parties.includes(hosted.mixParty)) hosted.mixParty = undefined;
    }
  }

  #record(message: Extract<ToWorker, { type: 'record' }>): void {
    const hosted = this.#byId.get(message.id);
    if (!hosted) return;
    if (hosted.recorder) this.#recordOver(hosted, hosted.recorder, 'taken-back');
    try {
      const recorder = new WorkerRecorder(message);
      hosted.recorder = recorder;
      // The main thread stopped taking frames before it sent this: the latest one waiting is the recording's first.
      let frame: Frame | undefined;
      while ((frame = hosted.memory.received.pop(hosted.frames)) !== undefined) recorder.put(frame);
    } catch (error) {
      // The file could not be reopened here (or the message was bad): the main thread fails the recording.
      const reason = error instanceof Error ? error.message : String(error);
      const { recordedSamples } = message.progress ?? { recordedSamples: 0 };
      this.post({ type: 'record-ended', id: hosted.id, record: message.record, end: 'open-failed', recordedSamples, reason });
    }
  }

  /** One tick of a stream's recording: 20 ms into its file, or its end (taken back, or over here). */
  #recordTick(hosted: HostedStream, recorder: WorkerRecorder): void {
    if (recorder.stopped) {
      this.#recordOver(hosted, recorder, 'taken-back');
      return;
    }
    const result = recorder.tick();
    if (result === 'ok') return;
    const error = recorder.lastError;
    this.#recordOver(hosted, recorder, result, error === undefined ? undefined : error instanceof Error ? error.message : String(error));
  }

  #recordOver(hosted: HostedStream, recorder: WorkerRecorder, end: RecordEnd['end'], reason?: string): void {
    if (hosted.recorder === recorder) hosted.recorder = undefined;
    this.post({ type: 'record-ended', id: hosted.id, ...recorder.close(end, reason) });
  }

  #startMixRecording(message: Extract<ToWorker, { type: 'mix-record' }>): void {
    const hosted = this.#mixes.get(message.mix);
    if (!hosted) {
      // The mix ended on its way here: the recording goes on on the main thread.
      this.post({ type: 'mix-record-ended', mix: message.mix, record: message.record, end: 'taken-back', recordedSamples: message.progress?.recordedSamples ?? 0 });
      return;
    }
    if (hosted.recorder) this.#mixRecordOver(hosted, hosted.recorder, 'taken-back');
    try {
      hosted.recorder = new WorkerRecorder(message);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.post({ type: 'mix-record-ended', mix: message.mix, record: message.record, end: 'open-failed', recordedSamples: message.progress?.recordedSamples ?? 0, reason });
    }
  }

  /** One tick of a bridge recording: this tick's mix into its file, or its end. */
  #recordMix(hosted: HostedMix, recorder: WorkerRecorder): void {
    if (recorder.stopped) {
      this.#mixRecordOver(hosted, recorder, 'taken-back');
      return;
    }
    hosted.mix.mixInto(hosted.mixed.samples);
    recorder.put(hosted.mixed);
    const result = recorder.tick();
    if (result === 'ok') return;
    const error = recorder.lastError;
    this.#mixRecordOver(hosted, recorder, result, error === undefined ? undefined : error instanceof Error ? error.message : String(error));
  }

  #mixRecordOver(hosted: HostedMix, recorder: WorkerRecorder, end: RecordEnd['end'], reason?: string): void {
    if (hosted.recorder === recorder) hosted.recorder = undefined;
    this.post({ type: 'mix-record-ended', mix: hosted.mix.id, ...recorder.close(end, reason) });
  }

  #playSound(hosted: HostedStream, sound: WorkerSoundPlayer): void {
    if (sound.stopped) {
      this.#soundOver(hosted);
      return;
    }
    const frame = sound.next(hosted.frames);
    if (frame) {
      if (!hosted.looping) hosted.stream.writeFrame(frame);
      return;
    }
    this.#soundOver(hosted);
    this.post({ type: 'sound-ended', id: hosted.id, play: sound.play });
  }

  /** The sound ended or was taken back: the received audio has a reader again, decoded from the next packet. */
  #soundOver(hosted: HostedStream): void {
    hosted.sound = undefined;
    this.#skipIfUnheard(hosted);
  }

  /**
   * The stream's decoded audio has no reader while the worker plays a sound to it (not handed to
   * the main thread) or while Echo() reflects its packets (a packet of another codec would be
   * decoded only to be dropped): then it is not decoded at all.
   */
  #skipIfUnheard(hosted: HostedStream): void {
    const unheard = hosted.sound !== undefined || (hosted.looping && hosted.stream.reflecting);
    hosted.stream.skipAudio(this.skipUnheardAudio && unheard);
  }

  #writeFigures(hosted: HostedStream): void {
    const { stream } = hosted;
    const figures = hosted.memory.figures;
    figures[FIGURE.hasStatistics] = stream.statisticsInto(figures, FIGURE.statistics) ? 1 : 0;
    const jitterBuffer = stream.jitterBuffer;
    figures[FIGURE.jitterBuffer] = jitterBuffer ? 1 : 0;
    if (jitterBuffer) {
      figures[FIGURE.late] = jitterBuffer.late;
      figures[FIGURE.concealed] = jitterBuffer.concealed;
      figures[FIGURE.targetDelayMs] = jitterBuffer.targetDelayMs;
    }
    figures[FIGURE.strangerPackets] = stream.strangerPackets;
    figures[FIGURE.strangerReports] = stream.strangerReports;
    figures[FIGURE.srtpRefusedPackets] = stream.srtpRefusedPackets;
  }

  /** The worker's figures since the last call, `seconds` ago. */
  load(seconds: number, utilization: number, cpu: number): WorkerLoadReport {
    let packetsIn = this.#closedPacketsIn;
    let packetsOut = this.#closedPacketsOut;
    let ringDrops = this.#closedRingDrops;
    let relayed = 0;
    let mixed = 0;
    let recordings = 0;
    for (const hosted of this.#mixList) if (hosted.recorder) recordings += 1;
    for (const hosted of this.#list) {
      if (hosted.recorder) recordings += 1;
      if (hosted.relayTo) relayed += 1;
      if (hosted.mixParty || hosted.mixLeg) mixed += 1;
      packetsIn += hosted.memory.figures[FIGURE.statistics + 1];
      packetsOut += hosted.memory.figures[FIGURE.statistics];
      ringDrops += hosted.memory.received.dropped + hosted.memory.toSend.dropped;
    }
    const report: WorkerLoadReport = {
      streams: this.#list.length,
      packetsInPerSecond: seconds > 0 ? (packetsIn - this.#lastPacketsIn) / seconds : 0,
      packetsOutPerSecond: seconds > 0 ? (packetsOut - this.#lastPacketsOut) / seconds : 0,
      utilization,
      cpu,
      ringDrops,
      relayedStreams: relayed,
      mixedStreams: mixed,
      mixes: this.#mixes.size,
      recordings,
    };
    this.#lastPacketsIn = packetsIn;
    this.#lastPacketsOut = packetsOut;
    return report;
  }

  /** Ends every stream (the worker is told to stop). */
  closeAll(): void {
    for (const hosted of [...this.#list]) hosted.stream.close();
    this.clock.stop();
  }
}
