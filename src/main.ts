#!/usr/bin/env node
// Command-line entry point: `patchbay [--config path]` runs the server; `patchbay <command>` is the
// admin CLI (src/cli/admin.ts) talking to a running server. Start-up failures are one line on stderr
// and one of the exit codes below (documented in --help and the README).
import { parseArgs } from 'node:util';
import { ConfigError, describeConfigSources, loadConfig, type PatchbayConfig } from './config/config.ts';
import { DialplanSyntaxError } from './dialplan/index.ts';
import { patchbayVersion } from './core/system-info.ts';
import { isAdminCommandLine } from './cli/options.ts';
import type { RunningServer } from './server.ts';
import type { StartedServer } from './cli/test-command.ts';

const EXIT = {
  ok: 0,
  /** An unexpected error (a defect): the message and its stack are printed. */
  internal: 1,
  /** Bad options, configuration file, environment variable or dialplan (syntax error, missing file). */
  config: 2,
  /** The HTTP or SIP port cannot be listened on (in use, address not available, not permitted). */
  listen: 3,
  /** The data directory (or another configured directory) cannot be created, read or written. */
  dataDir: 4,
} as const;


const HELP = `usage: patchbay [--config file.yaml]        run the server
       patchbay [options] <command> [arguments]  talk to a running server (admin CLI)
       patchbay -r                          interactive admin shell (history, Tab completion)
       patchbay -x "<command>"              run one admin command, as asterisk -rx
       patchbay --check [--config file.yaml]  check the configuration, bind nothing
       patchbay test [options] <scenario.yaml…>  virtual callers test voice apps (test --help)
       patchbay --version | --help

Options:
  -c, --config <file>   YAML configuration file (default: $PATCHBAY_CONFIG, else embedded defaults;
                        see docs/configuration.md). Through npm: npm start -- --config file.yaml
  -t, --check           read the configuration (YAML, environment, Asterisk directory, dialplan,
                        pjsip.conf), print what each source set and every option ignored and why,
                        and exit: 0 it would start, 2 it would not (binds no port)
  -V, --version         print the version and exit (-v too)
  -h, --help            print this help and exit

Environment variables (override the file):
  PATCHBAY_CONFIG       configuration file when --config is not given
  PATCHBAY_HTTP_PORT    HTTP/ARI listen port (default 8088; 0 picks a free port)
  PATCHBAY_HTTP_BIND    HTTP/ARI (and SIP) bind address (default 127.0.0.1)
  PATCHBAY_DATA_DIR     data directory (default ./data)
  PATCHBAY_SIP_PORT     SIP UDP/TCP port (default 5060; 0 picks a free port)
  PATCHBAY_ASTERISK_CONFIG_DIR
                        an Asterisk configuration directory (a copy of /etc/asterisk) to read

Admin commands (use the configured ARI address and credentials; --json for JSON output):
  channels | bridges | endpoints | apps           list them
  show channel <id>                               details of one channel
  hangup <id>                                     hang a channel up
  originate <endpoint> <app|exten@context>        start a call
  dialplan show [context]                         print the dialplan
  reload                                          reload the reloadable modules (the dialplan too)
  stop [--now | --gracefully]                     stop the server
  events [--app name]                             follow the event stream
  pjsip show endpoints|endpoint <id>|contacts|registrations|transports
  core show version|uptime|channels count         the server's version, uptime, call counts
  core set debug <0-10|off>                       server log level
  logger rotate                                   rotate the log files
  sip trace [on [match] | off]                    SIP messages of matching calls into the log
  Run "patchbay <command> --help" for a command's options.

Signals: SIGTERM/SIGINT stop cleanly (recordings are finalised); SIGHUP reloads the configuration
file, the dialplan and pjsip.conf; SIGUSR1 stops gracefully (new calls refused, stop when the last channel
ends); SIGUSR2 cancels a graceful stop.
Exit codes: 0 ok, 1 unexpected error, 2 bad configuration or dialplan, 3 cannot listen
(port in use), 4 data directory unusable.
`;

/** One line for a known start-up failure with its exit code, or null for an unexpected error. */
function describeStartupFailure(err: unknown, config?: PatchbayConfig): { line: string; code: number } | null {
  const e = err as NodeJS.ErrnoException & { syscall?: string; address?: string; port?: number; cause?: unknown };
  // The server id is read from (or stored in) the data directory while the configuration loads.
  if (err instanceof ConfigError && err.key === 'server_id' && /cannot (read|store)/.test(err.message)) {
    return { line: `data directory unusable: ${e.message}`, code: EXIT.dataDir };
  }
  if (err instanceof ConfigError || (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'))) {
    return { line: e.message, code: EXIT.config };
  }
  if (err instanceof DialplanSyntaxError) return { line: `dialplan: ${e.message}`, code: EXIT.config };
  if (e?.syscall === 'listen' || e?.syscall === 'bind' || e?.code === 'EADDRINUSE' || e?.code === 'EADDRNOTAVAIL') {
    const where = e.address !== undefined ? ` ${e.address}${e.port !== undefined ? `:${e.port}` : ''}` : '';
    const why = e.code === 'EADDRINUSE' ? 'address already in use' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EADDRNOTAVAIL' ? 'address not available' : (e.code ?? e.message);
    return { line: `cannot listen on${where}: ${why}`, code: EXIT.listen };
  }
  if (typeof e?.path === 'string' && typeof e.code === 'string') {
    if (config?.dialplan.file && e.path === config.dialplan.file) return { line: `dialplan: cannot read ${e.path}: ${e.code}`, code: EXIT.config };
    return { line: `${e.syscall ?? 'cannot use'} ${e.path}: ${e.code} (check PATCHBAY_DATA_DIR / dirs.* and their permissions)`, code: EXIT.dataDir };
  }
  // better-sqlite3 errors name no path.
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) {
    return { line: `cannot open the database in ${config?.dirs.data ?? 'the data directory'}: ${e.message} (${e.code})`, code: EXIT.dataDir };
  }
  if (e?.cause !== undefined && e.cause !== err) return describeStartupFailure(e.cause, config);
  return null;
}

/**
 * Under `npx` the server runs as npm → sh -c → node, and npm passes SIGTERM/SIGINT to the shell
 * alone, which dies and leaves the server running, orphaned. So when npm exec launched it, the
 * server watches its parent and, once that is gone, stops as if it had been sent SIGTERM.
 * (`npm start` execs node: one process, signalled directly.)
 */
function watchLauncher(onGone: () => void): void {
  if (process.env.npm_command !== 'exec') return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) onGone();
  }, 250).unref();
}

function fail(line: string, code: number): never {
  process.stderr.write(`patchbay: ${line.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(code);
}

/** A server for `patchbay test --start`: its log is kept out of the test output but for warnings. */
async function startServerForTests(configPath: string | undefined): Promise<StartedServer> {
  const config = loadConfig({ path: configPath });
  const { startServer } = await import('./server.ts');
  const { Writable } = await import('node:stream');
  const warnings = new Writable({
    write(chunk, _encoding, done) {
      const line = String(chunk);
      if (/"level":(40|50|60)/.test(line)) process.stderr.write(line);
      done();
    },
  });
  const server = await startServer(config, { logDestination: warnings });
  return { url: server.url, soundDirs: config.dirs.sounds, stop: () => server.stop() };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // `patchbay test <files…>`: virtual callers (src/cli/test-command.ts); --start builds a server here.
  if (argv[0] === 'test') {
    const { runTestCommand } = await import('./cli/test-command.ts');
    process.exitCode = await runTestCommand(argv.slice(1), startServerForTests);
    return;
  }
  // A command anywhere on the line (options may come before it), or -r / -x: the admin CLI.
  if (isAdminCommandLine(argv)) {
    const { runAdminCommand } = await import('./cli/admin.ts');
    process.exitCode = await runAdminCommand(argv);
    return;
  }
  let config: PatchbayConfig;
  let configPath: string | undefined;
  try {
    const { values } = parseArgs({
      // -V as everywhere in the CLI (Asterisk's); -v kept for those who used it.
      args: argv.map((arg) => (arg === '-v' ? '-V' : arg)),
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
        check: { type: 'boolean', short: 't' },
      },
    });
    if (values.help) {
      process.stdout.write(HELP);
      return;
    }
    if (values.version) {
      process.stdout.write(`patchbay ${patchbayVersion()}\n`);
      return;
    }
    configPath = values.config;
    if (values.check) {
      const { checkConfiguration } = await import('./cli/check.ts');
      const report = checkConfiguration(() => loadConfig({ path: configPath }));
      process.stdout.write(`${report.lines.join('\n')}\n`);
      process.exitCode = report.errors > 0 ? EXIT.config : EXIT.ok;
      return;
    }
    config = loadConfig({ path: configPath });
  } catch (err) {
    const known = describeStartupFailure(err);
    if (known) fail(known.line, known.code);
    throw err;
  }
  // Loaded after the configuration so that --help and --version stay quick.
  const { startServer } = await import('./server.ts');
  let server: RunningServer;
  try {
    server = await startServer(config);
  } catch (err) {
    const known = describeStartupFailure(err, config);
    if (known) fail(known.line, known.code);
    throw err;
  }
  const log = server.log;
  if (config.ari.users.length === 0) {
    // As Asterisk with a stock ari.conf: nobody can log in until a user is added (reload takes it).
    log.warn('no ARI user is configured (ari.conf has no type=user section, or ari.users is empty): ARI and the console accept no login until one is added');
  } else if (config.usingDefaultPassword) {
    log.warn('the ARI user "asterisk" still has the embedded default password "asterisk"; set ari.users in a config file before exposing this server beyond loopback');
  }
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Bounded: a stop that hangs must not keep a service manager waiting for ever.
    setTimeout(() => {
      log.error({ signal }, 'shutdown took longer than 10 s; exiting anyway');
      process.exit(1);
    }, 10_000).unref();
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // SIGHUP reloads, as Asterisk's `core reload` does: the configuration file (settings that can
  // change while running are applied, the others named as taking effect at restart; a file with
  // an error is reported and the running configuration kept) and the dialplan (a file with a
  // syntax error is reported and the running dialplan kept).
  let reloading = false;
  const reload = (): void => {
    if (reloading || stopping) return;
    reloading = true;
    log.info({ signal: 'SIGHUP' }, 'reloading the configuration and the dialplan');
    try {
      const changes = server.applyConfig(loadConfig({ path: configPath }));
      if (changes.live.length > 0) log.info({ settings: changes.live }, `configuration reloaded: ${changes.live.join(', ')} applied`);
      if (changes.atRestart.length > 0) log.warn({ settings: changes.atRestart }, `changed settings that take effect at the next start: ${changes.atRestart.join(', ')}`);
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : (err as Error).message ?? String(err);
      log.error(`configuration reload failed, the running configuration stays: ${message}`);
    }
    const reason = (err: unknown): string => {
      const cause = (err as { cause?: unknown }).cause ?? err;
      return (cause as Error).message ?? String(cause);
    };
    const dialplan = server.core.modules.reload('pbx_config.so').catch((err: unknown) => {
      log.error({ file: config.dialplan.file }, `dialplan reload failed, the previous dialplan stays: ${reason(err)}`);
    });
    // pjsip.conf too, as Asterisk's `core reload` reloads res_pjsip (calls go on).
    const pjsip = config.sip.pjsipConf && config.sip.enabled
      ? server.core.modules.reload('chan_pjsip.so').catch((err: unknown) => log.error({ file: config.sip.pjsipConf }, `pjsip.conf reload failed: ${reason(err)}`))
      : undefined;
    void Promise.all([dialplan, pjsip]).then(() => {
      reloading = false;
    });
  };
  // SIGUSR1: stop gracefully (Asterisk's `core stop gracefully`): refuse new calls, stop once the
  // last channel has ended. SIGUSR2 takes calls again (`core abort shutdown`). `patchbay stop
  // --gracefully` sends them.
  const drain = (on: boolean): void => {
    if (stopping) return;
    if (on) log.info({ signal: 'SIGUSR1', channels: server.core.channels.size }, 'stopping gracefully: new calls are refused; stopping when the last channel ends');
    else log.info({ signal: 'SIGUSR2' }, 'graceful stop cancelled: taking new calls again');
    server.drain(on, on ? () => shutdown('SIGUSR1') : undefined);
  };
  // Last resort: a defect reached from one request must not end every call on the server.
  process.on('uncaughtException', (err) => log.fatal({ err }, 'uncaught exception; the server goes on'));
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled promise rejection; the server goes on'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  watchLauncher(() => shutdown('launcher exited'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', reload);
  process.on('SIGUSR1', () => drain(true));
  process.on('SIGUSR2', () => drain(false));
  // `patchbay stop` on this host finds the server by its pidfile (ARI has no stop operation).
  let removePidFile = (): void => {};
  try {
    const { writePidFile } = await import('./cli/pidfile.ts');
    removePidFile = writePidFile(config.dirs.data);
  } catch (err) {
    log.warn({ err }, 'could not write the pidfile; patchbay stop will not find this server');
  }
  process.on('exit', () => removePidFile());
  // Announced last (after the signal handlers and the pidfile): whoever waits for this line may signal the server at once.
  const prefix = config.http.prefix.replace(/^\/+|\/+$/g, '');
  log.info({ url: `${server.url}${prefix ? `/${prefix}` : ''}/ari`, serverId: config.serverId, config: describeConfigSources(config.origin) }, 'Patchbay is listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`patchbay: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(EXIT.internal);
});
