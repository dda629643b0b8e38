// `patchbay --check` (as `nginx -t`): reads the configuration the server would start with — the
// YAML file, the environment, an Asterisk directory, the dialplan and pjsip.conf — and says what
// each source configured and everything ignored and why, without binding a port or opening the
// data directory's database. Exit 0 when the server would start with it, 2 when it would not (or
// when an object would be left out: a pjsip.conf error drops the object at start-up).
import { readFileSync } from 'node:fs';
import { describeConfigSources, loadConfig, type PatchbayConfig } from '../config/config.ts';
import { DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE, DialplanSyntaxError, parseDialplan } from '../dialplan/index.ts';
import { includeReader } from '../dialplan/includes.ts';
import { buildPjsipConfig, readPjsipConf } from '../channels/pjsip/config/index.ts';

export interface CheckReport {
  /** Lines for stdout, in order. */
  readonly lines: string[];
  readonly errors: number;
  readonly warnings: number;
}

/** Most settings named per source (a huge YAML file must not flood the terminal). */
const MAX_KEYS_SHOWN = 200;

/** Checks a configuration; `load` defaults to reading it as the server would. */
export function checkConfiguration(load: () => PatchbayConfig = () => loadConfig()): CheckReport {
  const lines: string[] = [];
  let errors = 0;
  let warnings = 0;
  const error = (line: string): void => {
    errors += 1;
    lines.push(`ERROR   ${line}`);
  };
  const warn = (line: string): void => {
    warnings += 1;
    lines.push(`WARNING ${line}`);
  };
  let config: PatchbayConfig;
  try {
    config = load();
  } catch (err) {
    error(err instanceof Error ? err.message : String(err));
    return { lines, errors, warnings };
  }
  lines.push(`configuration: ${describeConfigSources(config.origin)}`);
  const bySource = new Map<string, string[]>();
  for (const [key, source] of Object.entries(config.origin.explicit)) {
    // `<dir>/http.conf:4` → grouped under the file, the line kept beside the key.
    const file = source.replace(/:\d+$/, '');
    const line = source.slice(file.length);
    const keys = bySource.get(file) ?? [];
    keys.push(`${key}${line}`);
    bySource.set(file, keys);
  }
  for (const [source, keys] of [...bySource].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${source}: ${keys.slice(0, MAX_KEYS_SHOWN).join(', ')}${keys.length > MAX_KEYS_SHOWN ? ', …' : ''}`);
  }
  if (bySource.size === 0) lines.push('  every setting has its default');
  for (const line of config.warnings) warn(line);
  if (config.ari.users.length === 0) warn('no ARI user is configured: ARI and the console accept no login (add a type=user section to ari.conf or ari.users)');
  else if (config.usingDefaultPassword) warn('the ARI user "asterisk" has the embedded default password "asterisk"');
  lines.push(`ARI: http://${config.http.bind}:${config.http.port}${config.http.prefix ? `/${config.http.prefix.replace(/^\/+|\/+$/g, '')}` : ''}/ari, ${config.ari.users.length} user(s)`);
  checkDialplanFile(config, lines, error, warn);
  if (config.sip.enabled) checkPjsipConf(config, lines, error, warn);
  else lines.push('SIP: disabled (sip.enabled: false)');
  lines.push(errors > 0 ? `configuration has ${errors} error(s) and ${warnings} warning(s): the server would not start as configured` : `configuration ok (${warnings} warning(s))`);
  return { lines, errors, warnings };
}

function checkDialplanFile(config: PatchbayConfig, lines: string[], error: (line: string) => void, warn: (line: string) => void): void {
  const file = config.dialplan.file;
  try {
    const parsed = file ? parseDialplan(readFileSync(file, 'utf8'), file, { include: includeReader(file) }) : parseDialplan(DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE);
    const extensions = parsed.contexts.reduce((sum, context) => sum + context.extensions.length, 0);
    lines.push(`dialplan: ${file ?? '(embedded default)'}: ${parsed.contexts.length} context(s), ${extensions} extension(s), ${parsed.globals.size} global(s)`);
    for (const line of parsed.warnings ?? []) warn(line);
  } catch (err) {
    if (err instanceof DialplanSyntaxError) error(`dialplan: ${err.message}`);
    else error(`dialplan: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

function checkPjsipConf(config: PatchbayConfig, lines: string[], error: (line: string) => void, warn: (line: string) => void): void {
  const file = config.sip.pjsipConf;
  if (!file) {
    const listen = `${config.sip.bind || config.http.bind}:${config.sip.port}`;
    lines.push(`SIP: no pjsip.conf; UDP and TCP on ${listen}${Object.hasOwn(config.origin.explicit, 'sip.port') ? '' : ' (the default port: if taken, the server runs without SIP and /health says degraded)'}`);
    return;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    error(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return;
  }
  let read;
  try {
    read = readPjsipConf(text, file, includeReader(file));
  } catch (err) {
    error(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  const built = buildPjsipConfig(read.objects);
  const pjsip = built.value;
  const counts = [
    `${pjsip.endpoints.size} endpoint(s)`,
    `${pjsip.aors.size} aor(s)`,
    `${pjsip.auths.size} auth(s)`,
    `${pjsip.identifies.size} identify(s)`,
    `${pjsip.registrations.size} registration(s)`,
    `${pjsip.transports.size} transport(s)`,
  ];
  lines.push(`pjsip.conf: ${file}: ${counts.join(', ')}`);
  for (const transport of pjsip.transports.values()) lines.push(`  transport ${transport.id}: ${transport.protocol} ${transport.bind.host}:${transport.bind.port}`);
  for (const line of [...read.errors, ...built.errors]) error(line);
  for (const line of [...read.warnings, ...built.warnings]) warn(line);
}
