// GET /admin/cdr and GET /admin/cel: the stored call records, paged and filtered (docs/cdr.md).
// ARI has no CDR resource, so they sit with the other admin routes and their credentials. Every
// query parameter is checked: an unknown one, a malformed time or number, or a page beyond the
// bounds is a 400 naming it.
import type { CallRecords } from '../core/cdr/call-records.ts';
import { DISPOSITIONS, formatCdrTime, type Disposition } from '../core/cdr/record.ts';

export interface RecordAnswer {
  readonly status: number;
  readonly body: unknown;
}

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
const MAX_OFFSET = 10_000_000;
const MAX_NUMBER_LENGTH = 80;
const MAX_LINKEDID_LENGTH = 150;

class BadQuery extends Error {}

/** An ISO 8601 date-time or whole seconds since the epoch, as ms. */
function timeParam(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  if (/^\d{1,12}$/.test(text)) return Number(text) * 1000;
  if (text.length <= 40 && /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ms;
  }
  throw new BadQuery(`${name} must be an ISO 8601 time or seconds since the epoch`);
}

function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const text = query.get(name);
  if (text === null) return fallback;
  if (!/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max) throw new BadQuery(`${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function checkKnown(query: URLSearchParams, known: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!known.includes(name)) throw new BadQuery(`unknown parameter '${name.slice(0, 40)}' (${known.join(', ')})`);
    if (seen.has(name)) throw new BadQuery(`${name} given more than once`);
    seen.add(name);
  }
}

function page(query: URLSearchParams): { limit: number; offset: number } {
  return { limit: intParam(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT), offset: intParam(query, 'offset', 0, 0, MAX_OFFSET) };
}

const iso = (ms: number): string => (ms ? new Date(ms).toISOString() : '');

export function cdrRoute(records: CallRecords, query: URLSearchParams): RecordAnswer {
  try {
    checkKnown(query, ['since', 'until', 'number', 'disposition', 'limit', 'offset']);
    const number = query.get('number') ?? undefined;
    if (number !== undefined && (number === '' || number.length > MAX_NUMBER_LENGTH || /[\0-\x1f]/.test(number))) throw new BadQuery(`number must be 1–${MAX_NUMBER_LENGTH} printable characters`);
    const dispositionText = query.get('disposition')?.toUpperCase().replace(/_/g, ' ');
    if (dispositionText !== undefined && !(DISPOSITIONS as readonly string[]).includes(dispositionText)) throw new BadQuery(`disposition must be one of ${DISPOSITIONS.join(', ')}`);
    const { limit, offset } = page(query);
    const result = records.queryCdr({ since: timeParam(query, 'since'), until: timeParam(query, 'until'), number, disposition: dispositionText as Disposition | undefined, limit, offset });
    return {
      status: 200,
      body: {
        total: result.total,
        limit,
        offset,
        records: result.records.map((r) => ({
          ...r,
          start: iso(r.start),
          answer: iso(r.answer),
          end: iso(r.end),
          start_local: formatCdrTime(r.start),
          // The media quality its channels ended with (cdr_quality), when they carried RTP.
          quality: records.quality.find(r.uniqueid) ?? null,
          dst_quality: r.dstchannel ? (records.quality.find('', r.dstchannel) ?? null) : null,
        })),
      },
    };
  } catch (error) {
    if (error instanceof BadQuery) return { status: 400, body: { message: error.message } };
    throw error;
  }
}

export function celRoute(records: CallRecords, query: URLSearchParams): RecordAnswer {
  try {
    checkKnown(query, ['since', 'until', 'linkedid', 'limit', 'offset']);
    const linkedid = query.get('linkedid') ?? undefined;
    if (linkedid !== undefined && (linkedid === '' || linkedid.length > MAX_LINKEDID_LENGTH || /[\0-\x1f]/.test(linkedid))) throw new BadQuery(`linkedid must be 1–${MAX_LINKEDID_LENGTH} printable characters`);
    const { limit, offset } = page(query);
    const result = records.queryCel({ since: timeParam(query, 'since'), until: timeParam(query, 'until'), linkedid, limit, offset });
    return { status: 200, body: { total: result.total, limit, offset, events: result.events.map((e) => ({ ...e, eventtime: iso(e.eventtime) })) } };
  } catch (error) {
    if (error instanceof BadQuery) return { status: 400, body: { message: error.message } };
    throw error;
  }
}
