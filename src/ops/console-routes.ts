// The operator console's own read routes (docs/console.md), beside the other admin routes and
// with their credentials (any ARI user may read): a dialog's SIP ladder, call quality (live and
// of ended channels), and the sampled metrics behind the live charts. Every parameter is checked;
// ids from the client are only looked up.
import type { LadderStore, StoredDialog } from '../channels/pjsip/ladder-store.ts';
import type { SipLadder, LadderDialog } from '../channels/pjsip/sip-ladder.ts';
import type { CallQuality } from '../core/call-quality.ts';
import type { MetricsHistory } from './metrics-history.ts';

export interface ConsoleAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface ConsoleSources {
  readonly ladder: SipLadder;
  /** Ladders of ended calls in the database: asked when the in-memory ring no longer has one. */
  readonly storedLadders?: LadderStore;
  readonly quality: CallQuality;
  readonly history: MetricsHistory;
}

const MAX_ID_LENGTH = 256;
const MAX_LISTED_DIALOGS = 500;

const bad = (message: string): ConsoleAnswer => ({ status: 400, body: { message } });

function checkId(value: string | null, name: string): string | undefined {
  if (value === null) return undefined;
  if (value === '' || value.length > MAX_ID_LENGTH || /[\0-\x1f]/.test(value)) throw new RangeError(`${name} must be 1–${MAX_ID_LENGTH} printable characters`);
  return value;
}

function checkOnly(query: URLSearchParams, known: readonly string[]): void {
  for (const name of query.keys()) if (!known.includes(name)) throw new RangeError(`unknown parameter '${name.slice(0, 40)}'`);
}

function summary(dialog: LadderDialog | StoredDialog) {
  const last = dialog.messages.at(-1);
  return {
    stored: !('chars' in dialog),
    /** What sip/ladders/<id> takes: a Call-ID is not enough when Patchbay calls itself. */
    id: dialog.id,
    call_id: dialog.callId,
    kind: dialog.kind,
    from: dialog.from,
    to: dialog.to,
    first: new Date(dialog.firstAt).toISOString(),
    last: new Date(dialog.lastAt).toISOString(),
    messages: dialog.messages.length,
    dropped: dialog.dropped,
    last_message: last?.summary ?? '',
    channels: dialog.channels,
  };
}

/** `GET sip/ladders[/<id or call-id>]`, `GET quality`, `GET metrics/history`; undefined when not ours. */
export function consoleRoute(sources: ConsoleSources, path: readonly string[], query: URLSearchParams): ConsoleAnswer | undefined {
  try {
    const key = path.slice(0, 2).join('/');
    if (key === 'sip/ladders' && path.length === 2) {
      checkOnly(query, ['channel', 'limit']);
      const channel = checkId(query.get('channel'), 'channel');
      const limitText = query.get('limit') ?? '100';
      if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LISTED_DIALOGS) throw new RangeError(`limit must be a whole number from 1 to ${MAX_LISTED_DIALOGS}`);
      const dialogs =
        channel !== undefined
          ? [sources.ladder.ofChannel(channel) ?? sources.storedLadders?.ofChannel(channel)].filter((d) => d !== undefined)
          : sources.ladder.list().slice(0, Number(limitText));
      return { status: 200, body: { settings: sources.ladder.settings, skipped_dialogs: sources.ladder.skipped, dialogs: dialogs.map(summary) } };
    }
    if (key === 'sip/ladders' && path.length === 3) {
      checkOnly(query, []);
      // A ladder's id, or a Call-ID (its newest ladder), as before ladders were told apart by dialog.
      const id = checkId(path[2]!, 'ladder id')!;
      const dialog = sources.ladder.get(id) ?? sources.storedLadders?.get(id);
      if (!dialog) return { status: 404, body: { message: 'No ladder for this id or Call-ID (never seen, evicted, or the ladder is off)' } };
      return {
        status: 200,
        body: { ...summary(dialog), messages: dialog.messages.map((m) => ({ at: new Date(m.at).toISOString(), direction: m.direction, peer: m.peer, summary: m.summary, method: m.method, text: m.text })) },
      };
    }
    if (key === 'quality' && path.length === 1) {
      checkOnly(query, ['ended']);
      const ended = query.get('ended') ?? '200';
      if (!/^\d{1,4}$/.test(ended) || Number(ended) > 2000) throw new RangeError('ended must be a whole number from 0 to 2000');
      return { status: 200, body: { live: sources.quality.live(), ended: sources.quality.ended(Number(ended)) } };
    }
    if (key === 'metrics/history' && path.length === 2) {
      checkOnly(query, ['since']);
      const since = query.get('since') ?? '0';
      if (!/^\d{1,15}$/.test(since)) throw new RangeError('since must be ms since the epoch');
      return { status: 200, body: { interval_ms: sources.history.intervalMs, samples: sources.history.samples(Number(since)) } };
    }
    return undefined;
  } catch (error) {
    if (error instanceof RangeError) return bad(error.message);
    throw error;
  }
}
