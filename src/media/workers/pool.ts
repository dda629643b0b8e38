// The media workers: `size` worker_threads, each running the RTP streams placed on it
// (worker-host.ts). A new stream goes to the least-loaded worker (fewest streams, then the least
// busy event loop). The pool drains every stream's received frames on the main media clock, one
// per tick, and keeps what each worker last reported of its load (GET /metrics). A worker that
// dies takes its streams with it: each one's call is told (onLost) and the worker is started
// again — at once after a first crash, after a growing pause when it keeps dying at start.
// The pool also sets up a bridge mixed in the workers (mix()): the worker holding most of its
// members mixes, and each member of another worker gets a pair of shared rings to it.
import { Worker } from 'node:worker_threads';
import { samplesPerFrame, type SampleRate } from '../frame.ts';
import type { MixHandle } from '../mix.ts';
import type { RtpStreamTotals, StreamClock } from '../rtp/stream.ts';
import { MixLegMemory } from './mix-leg-memory.ts';
import type { FromWorker, ToWorker, WorkerLoadReport, WorkerMixMember, WorkerStreamOptions } from './protocol.ts';
import { RemoteRtpStream, type RemoteStreamEvents, type StreamLink } from './remote-stream.ts';
import { StreamMemory } from './stream-memory.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../recording-writer.ts';
import { RemoteRecorder } from './worker-recorder.ts';
import type { RemoteSecureMedia } from './remote-secure-media.ts';

/** The recordings of one worker mix written by its worker (taken back ones until the worker closed their files). */
interface MixRecordings {
  readonly slot: WorkerSlot;
  readonly recorders: Set<RemoteRecorder>;
}

/** A worker that dies within this long of its start waits before the next start, doubling up to the maximum. */
const QUICK_DEATH_MS = 5_000;
const RESTART_PAUSE_MAX_MS = 30_000;
/** How long stop() lets the workers close the recordings they write before it ends them. */
const STOP_RECORDINGS_WAIT_MS = 1_000;
/** A port range per worker below this many ports is too small to split: all workers share the whole range. */
const MIN_PORTS_PER_WORKER = 64;
/**
 * A stream asked to be near another worker's (nearWorker: the two legs of a B2BUA call) goes there
 * while that worker has at most this many streams more than the least-loaded one, or this share
 * more, whichever is larger, and its event loop is not this busy: a pair sharing a worker can be
 * relayed there, but a worker must not fill up while others idle.
 */
const AFFINITY_SLACK_STREAMS = 8;
const AFFINITY_SLACK_SHARE = 0.25;
const AFFINITY_MAX_UTILIZATION = 0.8;

export interface MediaWorkerPoolOptions {
  /** Workers to run (≥ 1). */
  readonly size: number;
  /** The main media clock: received frames are handed to the calls on its ticks. */
  readonly clock: StreamClock;
  /** A worker died (its streams are lost, it is being restarted): the owner logs it loudly. */
  readonly onWorkerExit?: (index: number, reason: string, lostStreams: number) => void;
}

export interface OpenRequest {
  readonly host: string;
  readonly portStart: number;
  readonly portEnd: number;
  readonly options: WorkerStreamOptions;
  readonly events: RemoteStreamEvents;
  readonly totals?: RtpStreamTotals;
  /** The worker of a stream this one will likely be connected with (Dial's caller): preferred while it has room. */
  readonly nearWorker?: number;
  /** A WebRTC call's stream: ICE-lite and SRTP in the worker, this DTLS handshake on the main thread. */
  readonly secure?: RemoteSecureMedia;
  /**
   * The highest rate the stream may receive audio at (its codecs' highest, whatever a re-INVITE
   * agrees later): its received frames' slots are sized for it. Absent: 48 kHz.
   */
  readonly maxReceiveRate?: SampleRate;
}

/** One worker's load as GET /metrics shows it. */
export interface WorkerLoad extends WorkerLoadReport {
  readonly index: number;
  /** Started and ready for streams (false while it loads, and between a crash and the restart). */
  readonly running: boolean;
  readonly restarts: number;
}

interface PendingOpen {
  readonly request: OpenRequest;
  readonly memory: StreamMemory;
  resolve(stream: RemoteRtpStream): void;
  reject(error: Error): void;
}

class WorkerSlot {
  worker: Worker | undefined;
  /** The worker loaded (a new worker takes a moment, seconds under tsx on a busy machine). */
  ready = false;
  startedAt = 0;
  restarts = 0;
  restartPauseMs = 1_000;
  load: WorkerLoadReport | undefined;
  /** Streams open and not yet closed by their call (a closing one may still be in `streams` until the worker confirms). */
  readonly active = new Set<RemoteRtpStream>();
  readonly streams = new Map<number, RemoteRtpStream>();
  readonly pending = new Map<number, PendingOpen>();

  constructor(readonly index: number) {}

  get placed(): number {
    return this.active.size + this.pending.size;
  }
}

export class MediaWorkerPool {
  readonly size: number;
  readonly #slots: WorkerSlot[] = [];
  /** Streams whose received frames go to their calls at each main tick (a looping stream has none). */
  #draining: RemoteRtpStream[] = [];
  #nextId = 1;
  #nextMixId = 1;
  #nextMixRecord = 1;
  /** Bridge recordings the mixing workers write, by mix. */
  readonly #mixRecordings = new Map<number, MixRecordings>();
  #stopped = false;
  readonly #options: MediaWorkerPoolOptions;

  constructor(options: MediaWorkerPoolOptions) {
    this.#options = options;
    this.size = Math.max(1, Math.floor(options.size));
    for (let i = 0; i < this.size; i++) {
      const slot = new WorkerSlot(i);
      this.#slots.push(slot);
      this.#start(slot);
    }
    // The main clock is asked for ticks only while a stream has frames to hand over: an idle pool
    // kept the main thread waking 50 times a second (about 8 ms of CPU a second).
  }

  /** Listens to the main clock while some stream drains into it, and only then. */
  #listen(): void {
    if (this.#draining.length > 0) this.#options.clock.onTick(this.#tick);
    else this.#options.clock.offTick(this.#tick);
  }

  /** Streams running in the workers. */
  get streams(): number {
    let count = 0;
    for (const slot of this.#slots) count += slot.streams.size;
    return count;
  }

  /**
   * Opens a stream on the least-loaded ready worker; undefined when none is ready (just started or
   * restarting: the caller runs the stream itself rather than wait); rejects when its ports are taken.
   */
  open(request: OpenRequest): Promise<RemoteRtpStream> | undefined {
    const slot = this.#withRoom(request.nearWorker) ?? this.#leastLoaded();
    if (!slot?.worker) return undefined;
    const id = this.#nextId++;
    const receivedSamples = samplesPerFrame(request.maxReceiveRate ?? 48000);
    const memory = StreamMemory.create(receivedSamples);
    const [portStart, portEnd] = this.#portsOf(slot.index, request.portStart, request.portEnd);
    return new Promise<RemoteRtpStream>((resolve, reject) => {
      slot.pending.set(id, { request, memory, resolve, reject });
      const secure = request.secure ? { secure: request.secure.ice.local } : {};
      this.#post(slot, { type: 'open', id, host: request.host, portStart, portEnd, options: request.options, memory: memory.buffer, receivedSamples, ...secure });
    });
  }

  /** Each worker's last load report. */
  loads(): WorkerLoad[] {
    return this.#slots.map((slot) => ({
      index: slot.index,
      running: slot.worker !== undefined && slot.ready,
      restarts: slot.restarts,
      streams: slot.streams.size,
      packetsInPerSecond: slot.load?.packetsInPerSecond ?? 0,
      packetsOutPerSecond: slot.load?.packetsOutPerSecond ?? 0,
      utilization: slot.load?.utilization ?? 0,
      cpu: slot.load?.cpu ?? -1,
      ringDrops: slot.load?.ringDrops ?? 0,
      relayedStreams: slot.load?.relayedStreams ?? 0,
      mixedStreams: slot.load?.mixedStreams ?? 0,
      mixes: slot.load?.mixes ?? 0,
      recordings: slot.load?.recordings ?? 0,
      heapUsedBytes: slot.load?.heapUsedBytes ?? 0,
      heapTotalBytes: slot.load?.heapTotalBytes ?? 0,
    }));
  }

  /** Brings every live stream's strict-RTP and SRTP counts into their totals (GET /metrics reads them). */
  syncTotals(): void {
    for (const slot of this.#slots) for (const stream of slot.streams.values()) stream.syncTotals();
  }

  /** Ends a worker as a crash would (tests, and an operator's last resort): its calls end, it restarts. */
  kill(index: number): Promise<void> {
    const worker = this.#slots[index]?.worker;
    return worker ? worker.terminate().then(() => undefined) : Promise.resolve();
  }

  async stop(): Promise<void> {
    // Recordings the workers write close their files first (the server's shutdown ended them just before).
    const deadline = Date.now() + STOP_RECORDINGS_WAIT_MS;
    while (Date.now() < deadline && (this.#recordingStreams().length > 0 || this.#mixRecordings.size > 0)) await new Promise((resolve) => setTimeout(resolve, 10));
    const recording = this.#recordingStreams();
    const mixRecorders = [...this.#mixRecordings.values()].flatMap((recordings) => [...recordings.recorders]);
    this.#stopped = true;
    this.#options.clock.offTick(this.#tick);
    this.#draining = [];
    await Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = undefined;
        for (const pending of slot.pending.values()) pending.reject(new Error('media workers stopped'));
        slot.pending.clear();
        slot.streams.clear();
        slot.active.clear();
        if (worker) await worker.terminate();
      }),
    );
    for (const stream of recording) stream.loseRecordings('media workers stopped');
    for (const recorder of mixRecorders) recorder.lost('media workers stopped');
  }

  /** Streams whose worker has a recording's file open. */
  #recordingStreams(): RemoteRtpStream[] {
    const streams: RemoteRtpStream[] = [];
    for (const slot of this.#slots) {
      if (!slot.worker) continue;
      for (const stream of slot.streams.values()) if (stream.recording) streams.push(stream);
    }
    return streams;
  }

  /** Worker `index`, when it is ready and has room for one more stream (see AFFINITY_SLACK_STREAMS). */
  #withRoom(index: number | undefined): WorkerSlot | undefined {
    if (index === undefined) return undefined;
    const slot = this.#slots[index];
    const least = this.#leastLoaded();
    if (!slot?.worker || !slot.ready || !least) return undefined;
    if ((slot.load?.utilization ?? 0) > AFFINITY_MAX_UTILIZATION) return undefined;
    const slack = Math.max(AFFINITY_SLACK_STREAMS, Math.ceil(least.placed * AFFINITY_SLACK_SHARE));
    return slot.placed - least.placed <= slack ? slot : undefined;
  }

  #leastLoaded(): WorkerSlot | undefined {
    let best: WorkerSlot | undefined;
    for (const slot of this.#slots) {
      if (!slot.worker || !slot.ready) continue;
      if (!best || slot.placed < best.placed || (slot.placed === best.placed && (slot.load?.utilization ?? 0) < (best.load?.utilization ?? 0))) best = slot;
    }
    return best;
  }

  /** Worker `index`'s share of the port range, so that workers binding at once do not race for the same ports. */
  #portsOf(index: number, start: number, end: number): [number, number] {
    const span = Math.floor((end - start + 1) / this.size);
    if (span < MIN_PORTS_PER_WORKER) return [start, end];
    const from = start + index * span;
    return [from, index === this.size - 1 ? end : from + span - 1];
  }

  #start(slot: WorkerSlot): void {
    const worker = spawnMediaWorker();
    // The pool, not its workers, decides when the process may exit (a stopped server with a live worker must not hang).
    worker.unref();
    slot.worker = worker;
    slot.ready = false;
    slot.startedAt = Date.now();
    slot.load = undefined;
    worker.on('message', (message: FromWorker) => this.#receive(slot, message));
    worker.on('error', (error) => this.#died(slot, worker, error.message));
    worker.on('exit', (code) => this.#died(slot, worker, `exited with code ${code}`));
  }

  #died(slot: WorkerSlot, worker: Worker, reason: string): void {
    if (slot.worker !== worker || this.#stopped) return;
    slot.worker = undefined;
    const lost = [...slot.streams.values()];
    slot.streams.clear();
    slot.active.clear();
    for (const pending of slot.pending.values()) pending.reject(new Error(`media worker ${slot.index} ${reason}`));
    slot.pending.clear();
    this.#options.onWorkerExit?.(slot.index, reason, lost.length);
    for (const stream of lost) stream.lost(`media worker ${slot.index} ${reason}`);
    for (const recordings of [...this.#mixRecordings.values()]) {
      if (recordings.slot === slot) for (const recorder of [...recordings.recorders]) recorder.lost(`media worker ${slot.index} ${reason}`);
    }
    slot.restarts += 1;
    const quick = Date.now() - slot.startedAt < QUICK_DEATH_MS;
    const pause = quick ? slot.restartPauseMs : 0;
    slot.restartPauseMs = quick ? Math.min(RESTART_PAUSE_MAX_MS, slot.restartPauseMs * 2) : 1_000;
    const restart = (): void => {
      if (!this.#stopped && !slot.worker) this.#start(slot);
    };
    if (pause === 0) restart();
    else setTimeout(restart, pause).unref();
  }

  #receive(slot: WorkerSlot, message: FromWorker): void {
    if (message.type === 'load') {
      slot.load = message.load;
      return;
    }
    if (message.type === 'ready') {
      slot.ready = true;
      return;
    }
    if (message.type === 'console') {
      process.stderr.write(`media worker ${slot.index}: ${message.text}`);
      return;
    }
    if (message.type === 'mix-record-ended') {
      const recordings = this.#mixRecordings.get(message.mix);
      for (const recorder of recordings?.recorders ?? []) if (recorder.record === message.record) recorder.ended(message);
      return;
    }
    if (message.type === 'opened' || message.type === 'open-failed') {
      const pending = slot.pending.get(message.id);
      if (!pending) return;
      slot.pending.delete(message.id);
      if (message.type === 'open-failed') {
        pending.reject(new Error(message.reason));
        return;
      }
      const { request } = pending;
      const stream = new RemoteRtpStream(message.id, message.port, slot.index, pending.memory, this.#linkOf(slot), request.events, request.totals, request.secure, request.host);
      slot.streams.set(message.id, stream);
      slot.active.add(stream);
      this.#draining.push(stream);
      this.#listen();
      pending.resolve(stream);
      return;
    }
    const stream = slot.streams.get(message.id);
    if (!stream) return;
    switch (message.type) {
      case 'digit':
        stream.digit(message.digit, message.durationMs);
        return;
      case 'stranger':
        stream.stranger(message.address, message.port);
        return;
      case 'unanswered':
        stream.unanswered(message.address, message.port);
        return;
      case 'dtls-in':
        stream.secure?.dtlsIn(message.record);
        return;
      case 'ice':
        stream.secure?.iceChanged(message.selected, message.consented === true);
        return;
      case 'sound-ended':
        stream.soundEnded(message.play);
        return;
      case 'record-ended':
        stream.recordEnded(message);
        return;
      case 'closed':
        slot.streams.delete(message.id);
        stream.closedByWorker(message.rtt);
        return;
    }
  }

  /**
   * Mixes the streams' audio in the worker holding most of them (ties: the least loaded), each
   * stream of another worker linked to it by a MixLegMemory both workers get; undefined when a
   * stream is not one of this pool's live streams or its worker is not running.
   */
  #mix(streams: readonly RemoteRtpStream[], rate: SampleRate): MixHandle | undefined {
    if (this.#stopped || streams.length < 2 || new Set(streams).size !== streams.length) return undefined;
    const counts = new Map<WorkerSlot, number>();
    for (const stream of streams) {
      const slot = this.#slots[stream.workerIndex];
      if (!slot?.worker || slot.streams.get(stream.id) !== stream || !stream.free) return undefined;
      counts.set(slot, (counts.get(slot) ?? 0) + 1);
    }
    let mixer: WorkerSlot | undefined;
    for (const [slot, count] of counts) {
      const best = mixer ? counts.get(mixer)! : -1;
      if (!mixer || count > best || (count === best && slot.placed < mixer.placed)) mixer = slot;
    }
    if (!mixer) return undefined;
    const mix = this.#nextMixId++;
    const members: WorkerMixMember[] = [];
    const legs: RemoteRtpStream[] = [];
    for (const stream of streams) {
      if (stream.workerIndex === mixer.index) {
        members.push({ id: stream.id });
        continue;
      }
      const memory = MixLegMemory.create();
      members.push({ memory: memory.buffer });
      legs.push(stream);
      this.#post(this.#slots[stream.workerIndex], { type: 'mix-leg', id: stream.id, memory: memory.buffer });
    }
    this.#post(mixer, { type: 'mix', mix, rate, members });
    for (const stream of streams) stream.enterMix();
    const mixerWorker = mixer.worker;
    let stopped = false;
    const recordings: MixRecordings = { slot: mixer, recorders: new Set() };
    return {
      record: (handover, ended) => (stopped || mixer.worker !== mixerWorker ? undefined : this.#recordMix(mix, recordings, handover, ended)),
      stop: () => {
        if (stopped) return;
        stopped = true;
        // The recording comes back with the mix: the worker closes its file when the mix ends there.
        for (const recorder of recordings.recorders) recorder.takeBack();
        // A restarted worker knows nothing of the mix (its number may not be reused there, but nothing is to be told).
        if (mixer.worker === mixerWorker) this.#post(mixer, { type: 'mix-end', mix });
        for (const stream of legs) if (!stream.closed) this.#post(this.#slots[stream.workerIndex], { type: 'mix-leg', id: stream.id });
        for (const stream of streams) stream.leaveMix();
      },
    };
  }

  /** Has the mixing worker write a recording of mix `mix` (one at a time). */
  #recordMix(mix: number, recordings: MixRecordings, handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    for (const recorder of recordings.recorders) if (!recorder.returning) return undefined;
    if (!handover.release()) return undefined;
    const record = this.#nextMixRecord++;
    const recorder = new RemoteRecorder(record, handover.progress, handover.paused, handover.muted, ended, (over) => {
      if (!over.over) return;
      recordings.recorders.delete(over);
      if (recordings.recorders.size === 0) this.#mixRecordings.delete(mix);
    });
    recordings.recorders.add(recorder);
    this.#mixRecordings.set(mix, recordings);
    const { file, formatName: format, maxDurationSamples, maxSilenceMs, progress } = handover;
    this.#post(recordings.slot, { type: 'mix-record', mix, record, file, format, maxDurationSamples, maxSilenceMs, progress, control: recorder.control });
    return recorder;
  }

  #linkOf(slot: WorkerSlot): StreamLink {
    return {
      mix: (streams, rate) => this.#mix(streams, rate),
      post: (message) => this.#post(slot, message),
      setDraining: (stream, draining) => {
        const index = this.#draining.indexOf(stream);
        if (draining && index < 0) this.#draining.push(stream);
        else if (!draining && index >= 0) this.#draining.splice(index, 1);
        this.#listen();
      },
      ended: (stream) => {
        slot.active.delete(stream);
      },
    };
  }

  #post(slot: WorkerSlot, message: ToWorker): void {
    slot.worker?.postMessage(message);
  }

  readonly #tick = (): void => {
    const draining = this.#draining;
    const catchingUp = this.#options.clock.catchingUp === true;
    for (let i = 0; i < draining.length; i++) draining[i].deliver(catchingUp);
  };
}

/**
 * The young generation a media worker's heap may grow to, MiB. V8 grows it to its most (3 × a
 * 16 MiB semi-space on 64-bit) under a worker's steady stream of short-lived objects (each received
 * datagram's Buffer and address), and keeps it: 60 MiB of two workers' RSS at 500 echo calls,
 * more than their streams' own memory. What survives a scavenge is tiny (the streams preallocate),
 * so a small young generation scavenges more often for about the same CPU (docs/performance.md,
 * "Memory per call (stop 36)").
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * The worker's resourceLimits: WORKER_YOUNG_GENERATION_MB, or `override` where it is a number
 * (PATCHBAY_MEDIA_WORKER_YOUNG_MB, a diagnostic switch for the bench's before/after, not a
 * setting): 0 leaves V8's default.
 */
export function workerHeapLimits(override: string | undefined): { resourceLimits?: { maxYoungGenerationSizeMb: number } } {
  const asked = override === undefined || override === '' ? WORKER_YOUNG_GENERATION_MB : Number(override);
  if (!Number.isFinite(asked) || asked <= 0) return {};
  return { resourceLimits: { maxYoungGenerationSizeMb: Math.min(Math.max(asked, 1), 256) } };
}

/**
 * A media worker thread. From dist/ the compiled entry runs as is; from src/ (tests and benches
 * under tsx) a .ts entry needs tsx in the worker too: it is registered there first, then the entry
 * imported — passing `--import tsx` in execArgv is not enough on Node 20.
 * Opus in a worker is @evan/opus's WebAssembly build (OPUS_FORCE_WASM, read by the package), whose
 * memory is its own in each thread. The native addon is not thread-safe: it hands every thread's
 * packets and audio back through one output buffer per process, so threads coding at once corrupt
 * each other's (bench/opus-threads.ts); and a worker that loaded it ending unloads it, killing the
 * process (SIGSEGV), unless the main thread holds it too. The native build stays the main thread's.
 */
function spawnMediaWorker(): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './media-worker.ts' : './media-worker.js', import.meta.url);
  const env = { ...process.env, OPUS_FORCE_WASM: '1' };
  // stdout/stderr not piped to this thread's (`true`: left to us, and never read). Reading a worker's
  // stdio stream here, in any way, made Node.js's stream functions, which every HTTP connection's
  // socket runs through, see a second kind of stream and run slower: 2–3 µs per ARI request, 15 % of
  // a ping (docs/performance.md, issue 25, fourth pass on ping). The worker's console output comes
  // as 'console' messages instead (media-worker.ts).
  const stdio = { stdout: true, stderr: true };
  const limits = workerHeapLimits(process.env.PATCHBAY_MEDIA_WORKER_YOUNG_MB);
  if (!fromSource) return new Worker(entry, { execArgv: [], env, ...stdio, ...limits });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, execArgv: [], env, ...stdio, ...limits });
}
