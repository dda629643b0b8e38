// Resuming an application's event stream on an event connection: where each application's stream
// starts (`resumeAfter`, or the acknowledged point in at-least-once mode), the replay of held events
// from the event log before the live stream, and acknowledgements (`{"type":"Ack"}` messages).
//
// Each stream is a cursor on the application's log. While it replays, live deliveries for that
// application are ignored: they are in the log, and the cursor reaches them in order. Once the
// cursor has caught up with the newest event, the stream turns live in the same synchronous step,
// so no event falls between replay and live, and none is sent twice (a live event is sent only
// when it is the very next sequence the stream expects).
import type { EventLog, LossReason } from '../core/event-log.ts';
import { formatAriDate } from '../util/ari-date.ts';

const TRUE_WORDS = new Set(['yes', 'true', 'y', 't', '1', 'on']);
/** Sequence numbers are integers a double holds exactly; 15 digits keep the parse exact. */
const SEQUENCE_RE = /^\d{1,15}$/;
/** Events replayed per turn of the event loop before other work gets its turn. */
const REPLAY_CHUNK = 256;

export interface ResumeRequest {
  /** Explicit resume points per application (`resumeAfter`). */
  readonly after: ReadonlyMap<string, number>;
  readonly ack: boolean;
  /** Calls wait for the applications while this connection is away. */
  readonly resumable: boolean;
}

function isTrue(value: string | null): boolean {
  return value !== null && TRUE_WORDS.has(value.trim().toLowerCase());
}

/** Reads resumeAfter, ack and resumable from the upgrade's query; a string is the 400 message. */
export function parseResumeRequest(query: URLSearchParams, apps: readonly string[]): ResumeRequest | string {
  const after = new Map<string, number>();
  const raw = query.get('resumeAfter');
  if (raw !== null) {
    const text = raw.trim();
    if (SEQUENCE_RE.test(text)) {
      if (apps.length !== 1) return 'resumeAfter must name the application (app:N, comma-separated) when several applications are given';
      after.set(apps[0]!, Number(text));
    } else {
      const parts = text.split(',');
      if (parts.length > apps.length) return 'resumeAfter names more applications than app does';
      for (const part of parts) {
        const colon = part.lastIndexOf(':');
        const name = part.slice(0, colon).trim();
        const number = part.slice(colon + 1).trim();
        if (colon <= 0 || !SEQUENCE_RE.test(number)) return 'resumeAfter must be a sequence number (an integer ≥ 0), or app:N for each application';
        if (!apps.includes(name)) return `resumeAfter names an application not in app: "${name}"`;
        if (after.has(name)) return `resumeAfter names "${name}" twice`;
        after.set(name, Number(number));
      }
    }
  }
  const ack = isTrue(query.get('ack'));
  return { after, ack, resumable: ack || after.size > 0 || isTrue(query.get('resumable')) };
}

/** What a connection offers its streams. */
export interface StreamOutput {
  readonly serverId: string;
  readonly closed: boolean;
  /** Sends a held event as it was logged. */
  sendLogged(json: string): void;
  /** Sends a message built here (EventsLost). */
  sendMessage(message: Record<string, unknown>): void;
  /** The socket holds enough not yet taken by the kernel: replay waits. */
  mustPause(): boolean;
  /** Calls `resume` once the socket has room again. */
  waitForRoom(resume: () => void): void;
}

interface Stream {
  readonly app: string;
  /** The next sequence this connection sends for the application. */
  next: number;
  live: boolean;
  readonly ack: boolean;
  /** A loss to report before the replay. */
  loss: { from: number; to: number | undefined; reason: LossReason } | undefined;
}

export class EventStreams {
  private readonly streams = new Map<string, Stream>();
  private pumping = false;

  constructor(
    private readonly log: EventLog,
    private readonly out: StreamOutput,
  ) {}

  /**
   * Places each application's cursor. Called before the applications are registered, so that the
   * events their registration raises (StasisStart of waiting channels) are after every cursor.
   */
  open(apps: readonly string[], request: ResumeRequest): void {
    for (const app of apps) {
      const explicit = request.after.get(app);
      let point: number | undefined = explicit;
      if (request.ack) {
        if (explicit !== undefined) this.log.ack(app, explicit);
        else {
          point = this.log.acked(app);
          // A first at-least-once connection starts live, and is acknowledged from there on.
          if (point === undefined) this.log.ack(app, this.log.lastSequence(app));
        }
      }
      if (point === undefined) {
        this.streams.set(app, { app, next: this.log.lastSequence(app) + 1, live: true, ack: request.ack, loss: undefined });
        continue;
      }
      const resume = this.log.resumePoint(app, point);
      this.streams.set(app, { app, next: resume.next, live: false, ack: request.ack, loss: resume.lost ? { ...resume.lost } : undefined });
    }
    this.pump();
  }

  /** A live event for the application: true when the connection sends it now. */
  accepts(app: string, sequence: number): boolean {
    const stream = this.streams.get(app);
    if (!stream) return true;
    if (!stream.live || sequence < stream.next) return false;
    stream.next = sequence + 1;
    return true;
  }

  /** Handles an Ack message; returns the problem to report, if any. */
  acknowledge(message: Record<string, unknown>): string | undefined {
    const { sequence } = message;
    let app = message.application;
    if (app === undefined && this.streams.size === 1) app = this.streams.keys().next().value;
    if (typeof app !== 'string') return 'An Ack needs "application" when the connection carries several applications';
    const stream = this.streams.get(app);
    if (!stream) return `This connection does not carry application "${app}"`;
    if (!stream.ack) return 'Acknowledgements need an event connection opened with ack=true';
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0) return 'An Ack needs "sequence", an integer ≥ 0';
    if (sequence >= stream.next) return `Sequence ${sequence} has not been sent on this connection`;
    this.log.ack(app, sequence);
    return undefined;
  }

  /** Sends held events until every stream is live, in chunks, pausing while the socket is full. */
  readonly pump = (): void => {
    if (this.pumping) return;
    this.pumping = true;
    try {
      this.replay();
    } finally {
      this.pumping = false;
    }
  };

  private replay(): void {
    let budget = REPLAY_CHUNK;
    for (const stream of this.streams.values()) {
      while (!stream.live) {
        if (this.out.closed) return;
        if (stream.loss) {
          this.reportLoss(stream.app, stream.loss.from, stream.loss.to, stream.loss.reason);
          stream.loss = undefined;
        }
        if (stream.next > this.log.lastSequence(stream.app)) {
          stream.live = true;
          break;
        }
        const json = this.log.text(stream.app, stream.next);
        if (json === undefined) {
          // The buffer let go of events while the replay waited for the socket.
          const first = this.log.firstHeld(stream.app);
          stream.loss = { from: stream.next, to: first - 1, reason: 'expired' };
          stream.next = first;
          continue;
        }
        if (budget-- <= 0) {
          setImmediate(this.pump);
          return;
        }
        if (this.out.mustPause()) {
          this.out.waitForRoom(this.pump);
          return;
        }
        this.out.sendLogged(json);
        stream.next++;
      }
    }
  }

  private reportLoss(app: string, from: number, to: number | undefined, reason: LossReason): void {
    this.out.sendMessage({
      type: 'EventsLost',
      timestamp: formatAriDate(),
      from_sequence: from,
      ...(to !== undefined ? { to_sequence: to } : {}),
      reason,
      application: app,
      asterisk_id: this.out.serverId,
    });
  }
}
