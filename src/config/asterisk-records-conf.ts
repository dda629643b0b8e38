// cdr.conf (with its [csv] section, which Asterisk's cdr_csv reads), cdr_csv.conf and cel.conf
// from an Asterisk configuration directory, as the `cdr` and `cel` settings (records-settings.ts).
// Options Patchbay does not implement are named in the start-up warnings, never dropped silently.
import type { ConfigSection } from './conf/reader.ts';

/** What asterisk-dir.ts's importer offers the readers of its files. */
interface ConfImporter {
  sections(file: string): ConfigSection[] | undefined;
  warn(line: string): void;
  set(key: string, value: unknown, at: string): void;
}

const truthy = (value: string): boolean => /^(yes|true|y|t|1|on)$/i.test(value.trim());

/** cdr.conf [general] options and the setting each sets. */
const CDR_GENERAL: Readonly<Record<string, string>> = {
  enable: 'cdr.enabled',
  unanswered: 'cdr.unanswered',
  congestion: 'cdr.congestion',
  initiatedseconds: 'cdr.initiated_seconds',
  channeldefaultenabled: 'cdr.channel_default_enabled',
};
/** [general] options whose default is all Patchbay does: only a non-default value is worth a warning. */
const CDR_DEFAULT_ONLY: Readonly<Record<string, boolean>> = {
  // Asterisk 22's default (cdr.c DEFAULT_END_BEFORE_H_EXTEN): records end as the `h` extension starts.
  endbeforehexten: true,
  ignorestatechanges: false,
  ignoredialchanges: false,
  canceldispositionenabled: false,
  debug: false,
};
/** Batch options: Patchbay always writes in batches of its own (cdr.flush_ms). */
const CDR_BATCH = new Set(['batch', 'size', 'time', 'scheduleronly', 'safeshutdown']);
const CSV_OPTIONS: Readonly<Record<string, string>> = {
  usegmtime: 'cdr.csv.use_gmt_time',
  loguniqueid: 'cdr.csv.log_unique_id',
  loguserfield: 'cdr.csv.log_user_field',
  accountlogs: 'cdr.csv.account_logs',
  newcdrcolumns: 'cdr.csv.new_cdr_columns',
};

function readCsvSection(im: ConfImporter, section: ConfigSection, file: string): void {
  for (const entry of section.entries) {
    const name = entry.name.trim().toLowerCase();
    const at = `${file}:${entry.line}`;
    const key = CSV_OPTIONS[name];
    if (key) im.set(key, truthy(entry.value), at);
    else im.warn(`${at}: [csv] option ${name} is not supported by Patchbay`);
  }
}

export function readCdrConf(im: ConfImporter): void {
  for (const section of im.sections('cdr.conf') ?? []) {
    const kind = section.name.toLowerCase();
    if (kind === 'csv') {
      readCsvSection(im, section, 'cdr.conf');
      continue;
    }
    if (kind !== 'general') {
      im.warn(`cdr.conf:${section.line}: [${section.name.slice(0, 40)}]: that backend is not supported by Patchbay (records go to SQLite and Master.csv)`);
      continue;
    }
    for (const entry of section.entries) {
      const name = entry.name.trim().toLowerCase();
      const at = `cdr.conf:${entry.line}`;
      const key = CDR_GENERAL[name];
      if (key) im.set(key, truthy(entry.value), at);
      else if (name in CDR_DEFAULT_ONLY) {
        const onlyValue = CDR_DEFAULT_ONLY[name] ? 'yes' : 'no';
        if (truthy(entry.value) !== CDR_DEFAULT_ONLY[name]) im.warn(`${at}: ${name}=${entry.value.trim().slice(0, 20)} is not supported by Patchbay (it behaves as ${name}=${onlyValue})`);
      } else if (CDR_BATCH.has(name)) im.warn(`${at}: ${name} is not used: Patchbay always writes records in batches (cdr.flush_ms)`);
      else im.warn(`${at}: option ${name} is not supported by Patchbay`);
    }
  }
  // Asterisk 22's cdr_csv reads [csv] from cdr.conf; a cdr_csv.conf is read too, for setups that split it out.
  for (const section of im.sections('cdr_csv.conf') ?? []) {
    if (section.name.toLowerCase() === 'csv' || section.name.toLowerCase() === 'general') readCsvSection(im, section, 'cdr_csv.conf');
    else im.warn(`cdr_csv.conf:${section.line}: [${section.name.slice(0, 40)}] is not read (only [csv])`);
  }
}

export function readCelConf(im: ConfImporter): void {
  for (const section of im.sections('cel.conf') ?? []) {
    if (section.name.toLowerCase() !== 'general') {
      im.warn(`cel.conf:${section.line}: [${section.name.slice(0, 40)}]: that backend is not supported by Patchbay (events go to SQLite)`);
      continue;
    }
    for (const entry of section.entries) {
      const name = entry.name.trim().toLowerCase();
      const at = `cel.conf:${entry.line}`;
      if (name === 'enable') im.set('cel.enabled', truthy(entry.value), at);
      else if (name === 'events') im.set('cel.events', entry.value, at);
      else if (name === 'apps') im.set('cel.apps', entry.value, at);
      else im.warn(`${at}: option ${name} is not supported by Patchbay`);
    }
  }
}
