// The `cdr` and `cel` settings: call detail records and channel event logging (docs/cdr.md). Their
// Asterisk names are cdr.conf's [general] and [csv] and cel.conf's [general] options, which
// asterisk-records-conf.ts reads into these keys.
import { boolean, integer, section, stringList } from './schema.ts';

const CEL_EVENT_NAMES = new Set([
  'ALL', 'CHAN_START', 'CHAN_END', 'ANSWER', 'HANGUP', 'BRIDGE_ENTER', 'BRIDGE_EXIT', 'APP_START', 'APP_END', 'LINKEDID_END',
  'USER_DEFINED', 'PARK_START', 'PARK_END', 'BLINDTRANSFER', 'ATTENDEDTRANSFER', 'PICKUP', 'FORWARD', 'LOCAL_OPTIMIZE',
  'LOCAL_OPTIMIZE_BEGIN', 'STREAM_BEGIN', 'STREAM_END', 'DTMF',
]);

export const CDR_SETTINGS = section({
  enabled: boolean({ default: true, doc: "Write call detail records (cdr.conf `enable`)" }),
  unanswered: boolean({ default: false, doc: 'Also keep records of calls that were never answered and have no destination channel (cdr.conf `unanswered`)' }),
  congestion: boolean({ default: false, doc: 'Report congestion as `CONGESTION` rather than `FAILED` (cdr.conf `congestion`)' }),
  initiated_seconds: boolean({ default: false, doc: 'Round billsec up from half a second (cdr.conf `initiatedseconds`)' }),
  channel_default_enabled: boolean({ default: true, doc: 'Records are made for every channel unless `CDR_PROP(disable)` says otherwise; `false`: only where the dialplan sets `CDR_PROP(disable)=0` (cdr.conf `channeldefaultenabled`)' }),
  sqlite: boolean({ default: true, doc: 'Keep records in the `cdr` table of `<dirs.data>/patchbay.sqlite` (what the read API and `patchbay cdr` serve)' }),
  sqlite_thread: boolean({
    default: false,
    doc: 'Insert the CDR and CEL rows from a worker thread with its own connection to the database, off the event loop that runs the calls (reads, flushes and shutdown still find every row). About 2 µs less of the event loop per row, about 3 µs more CPU in all: for hosts with idle cores, or tables large enough that the retention sweep would hold the event loop',
  }),
  csv: section({
    enabled: boolean({ default: true, doc: "Append records to `<dirs.logs>/cdr-csv/Master.csv` as Asterisk's cdr_csv does" }),
    use_gmt_time: boolean({ default: false, doc: 'Times in UTC rather than local time (`[csv] usegmtime`)' }),
    log_unique_id: boolean({ default: false, doc: 'Add the uniqueid column (`[csv] loguniqueid`)' }),
    log_user_field: boolean({ default: false, doc: 'Add the userfield column (`[csv] loguserfield`)' }),
    account_logs: boolean({ default: true, doc: 'Also append each record with an accountcode to `cdr-csv/<accountcode>.csv` (`[csv] accountlogs`)' }),
    new_cdr_columns: boolean({ default: false, doc: 'Add peeraccount, linkedid and sequence (`[csv] newcdrcolumns`)' }),
  }),
  retention_days: integer({ default: 90, min: 1, max: 36_500, doc: 'Records older than this many days are deleted from the database (checked every minute)' }),
  max_rows: integer({ default: 1_000_000, min: 100, max: 100_000_000, doc: 'Most records kept in the database; the oldest go first' }),
  flush_ms: integer({ default: 1000, min: 10, max: 60_000, doc: 'Records wait at most this long before they are written, in one transaction (and in one append to the CSV files)' }),
});

export const CEL_SETTINGS = section({
  enabled: boolean({ default: false, doc: 'Keep channel event logging records (cel.conf `enable`; off by default, as in Asterisk)' }),
  events: stringList({
    default: [],
    comma: true,
    docDefault: 'none',
    doc: 'The event types kept (cel.conf `events`), or `ALL`; see [CEL](cdr.md#cel)',
    check: (name) => (CEL_EVENT_NAMES.has(name.toUpperCase()) ? null : `unknown CEL event type '${name.slice(0, 40)}'`),
    map: (name) => name.toUpperCase(),
  }),
  apps: stringList({
    default: [],
    comma: true,
    docDefault: 'none',
    doc: 'Applications whose APP_START and APP_END are kept (cel.conf `apps`), or `ALL`',
    check: (name) => (/^[A-Za-z0-9_]{1,64}$/.test(name) ? null : `'${name.slice(0, 40)}' is not an application name`),
    map: (name) => name.toLowerCase(),
  }),
  retention_days: integer({ default: 30, min: 1, max: 36_500, doc: 'Events older than this many days are deleted (checked every minute)' }),
  max_rows: integer({ default: 1_000_000, min: 100, max: 100_000_000, doc: 'Most events kept; the oldest go first' }),
});
