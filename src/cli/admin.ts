// The admin CLI: `patchbay <command>` talks to a running server through ARI (HTTP and the events
// WebSocket) with the credentials of the server's own configuration, as `asterisk -rx` does for
// Asterisk. Every command returns an exit code (EXIT below); errors are one line on stderr.
// Output goes through an injectable writer so tests can run commands in-process.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { ConfigError, loadConfig, type PatchbayConfig } from '../config/config.ts';
import { DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE, parseDialplan, type ParsedDialplan } from '../dialplan/index.ts';
import { includeReader } from '../dialplan/includes.ts';
import { patchbayVersion } from '../core/system-info.ts';
import { AppEventFilter, caller, count, formatEvent, json, location, str, table, type Row } from './output.ts';
import { readPidFile, pidFilePath } from './pidfile.ts';
import { ari, CliError, EXIT, type Target as ServerTarget } from './client.ts';
import { ADMIN_COMMANDS, closest, parseAdminArgs, withoutShellOptions, type AdminValues } from './options.ts';
import { SERVER_COMMANDS } from './server-commands.ts';
import { runShell, shellHistoryFile, splitWords } from './shell.ts';

export { ADMIN_COMMANDS, EXIT };

export interface AdminIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Ends long-running commands (`events`, `stop --gracefully`); without it, SIGINT does. */
  readonly signal?: AbortSignal;
}

export const ADMIN_HELP = `usage: patchbay [options] <command> [arguments] [options]
       patchbay -r [options]          interactive shell
       patchbay -x "<command>" [options]

Talks to a running Patchbay through ARI, with the credentials of its configuration.

Commands:
  channels                         list channels
  bridges                          list bridges
  endpoints                        list endpoints
  apps                             list ARI applications
  show channel <id>                one channel in detail
  hangup <id>                      hang a channel up
  originate <endpoint> <app|exten@context>
                                   call an endpoint into an application or a dialplan extension
  dialplan show [context]          the dialplan file named by the configuration, parsed
                                   (read locally: ARI has no dialplan listing)
  reload [module]                  reload every reloadable module (the dialplan is pbx_config.so),
                                   or only the one named
  stop [--now | --gracefully]      stop the server on this host (SIGTERM to the pid in
                                   <data>/patchbay.pid); --gracefully (SIGUSR1) makes the server
                                   refuse new calls and stop when no channel is left (up to
                                   --timeout seconds, default: no limit; on timeout or Ctrl-C the
                                   server takes calls again (SIGUSR2) and keeps running)
  events [--app X] [--limit N]     live event stream, one line per event; Ctrl-C ends it
  pjsip show endpoints             SIP endpoints: state, channels, contacts, context, AORs
  pjsip show endpoint <id>         one endpoint in detail (codecs, auth, contacts, channels)
  pjsip show contacts              registered and static contacts, qualify status and RTT
  pjsip show registrations         outbound registrations and their status
  pjsip show transports            SIP transports and where they listen
  core show version                the server's version
  core show uptime                 time since start and since the last reload
  core show channels count         active channels, active calls, calls processed
  core show hanguphandlers <channel>|all
                                   hang-up handlers of one channel, or of every channel
  core set debug <0-10|off>        log at debug (trace from 5) on the server; off: the configured level
  logger rotate                    rotate every log file (log channels and patchbay.log)
  cdr                              stored call detail records, newest first (--since, --until,
                                   --number, --disposition, --limit (default 20), --offset)
  sip trace [on [match] | off]     SIP messages of calls matching a host, user or Call-ID (every
                                   message without a match) into the server log; alone: the state

  -r, --remote                     an interactive shell (history, Tab completion), as asterisk -r
  -x, --execute "<command>"        run one command, as asterisk -rx

Options:
  -c, --config <file>     server configuration (default: $PATCHBAY_CONFIG, else embedded defaults)
  -u, --user <name>       ARI user (default: the first read-write user with a plain password)
  -p, --password <pw>     ARI password (required for users whose password is a crypt hash)
      --url <url>         server address (default: from http.bind and http.port)
      --json              JSON instead of tables
      --app <name>        events: only events of channels in this application
      --limit <n>         events: stop after n events; cdr: records shown
      --offset <n>        cdr: skip the n newest matching records
      --since <time>      cdr: records that started at or after (ISO 8601 or epoch seconds)
      --until <time>      cdr: records that started before
      --number <n>        cdr: records whose src or dst is n
      --disposition <d>   cdr: ANSWERED, NO_ANSWER, BUSY, FAILED or CONGESTION
      --now               stop: at once (the default)
      --gracefully        stop: wait for the current calls to end first
      --timeout <s>       stop --gracefully: give up waiting after s seconds (exit 1)
  -h, --help              this text
  -V, --version           the version

Environment:
  PATCHBAY_CONFIG         configuration file (as --config)
  PATCHBAY_HTTP_PORT      server port (overrides the file)
  PATCHBAY_HTTP_BIND      server address (overrides the file)
  PATCHBAY_DATA_DIR       data directory (where stop finds patchbay.pid)
  PATCHBAY_ARI_USER       ARI user (as --user)
  PATCHBAY_ARI_PASSWORD   ARI password (as --password)
  PATCHBAY_URL            server address (as --url)
  PATCHBAY_HISTORY        the shell's history file (default ~/.patchbay_history; empty: none)

Exit codes: 0 done, 1 other failure (server error), 2 bad command line or configuration,
3 server unreachable, 4 credentials refused (401/403), 5 not found (404), 6 request refused (400, 409, 422, 503).
`;

type Values = AdminValues;

interface Target extends ServerTarget {
  readonly config: PatchbayConfig;
}

/** Runs one admin command; resolves with the process exit code. */
export async function runAdminCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, io?: AdminIo): Promise<number> {
  const out: AdminIo = io ?? { stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t) };
  try {
    let parsed: ReturnType<typeof parseAdminArgs>;
    try {
      parsed = parseAdminArgs(argv);
    } catch (err) {
      throw new CliError((err as Error).message, EXIT.usage);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out.stdout(ADMIN_HELP);
      return EXIT.ok;
    }
    if (values.version) {
      out.stdout(`${patchbayVersion()}\n`);
      return EXIT.ok;
    }
    // `-r` (the shell) and `-x "command"` run commands with the options given beside them.
    if (values.remote || values.execute !== undefined) {
      const global = withoutShellOptions(argv);
      const runLine = (words: readonly string[]): Promise<number> => runAdminCommand([...words, ...global], env, out);
      if (values.execute !== undefined) {
        if (positionals.length > 0) throw new CliError(`-x takes the command as its value; unexpected '${positionals[0]}'`, EXIT.usage);
        return await runLine(splitWords(values.execute));
      }
      if (positionals.length > 0) throw new CliError(`-r starts the shell; give the command with -x, or leave -r out`, EXIT.usage);
      return await runShell(runLine, { io: out, historyFile: shellHistoryFile(env) });
    }
    const [command, ...args] = positionals;
    if (command === undefined) throw new CliError(`no command given (one of: ${ADMIN_COMMANDS.join(', ')}; see --help)`, EXIT.usage);
    if (!ADMIN_COMMANDS.includes(command)) {
      const guess = closest(command, ADMIN_COMMANDS);
      throw new CliError(`unknown command '${command.slice(0, 64)}'${guess ? `, did you mean '${guess}'?` : ' (see --help)'}`, EXIT.usage);
    }
    const config = readConfig(values, env);
    if (command === 'dialplan') return dialplanShow(config, args, values, out);
    const target = resolveTarget(config, values, env);
    const serverCommand = SERVER_COMMANDS[command];
    if (serverCommand) return await serverCommand(target, args, values, out);
    return await COMMANDS[command]!(target, args, values, out);
  } catch (err) {
    if (err instanceof CliError) {
      out.stderr(`patchbay: ${err.message}\n`);
      return err.code;
    }
    out.stderr(`patchbay: ${(err as Error).message ?? String(err)}\n`);
    return EXIT.failure;
  }
}

export function readConfig(values: Values, env: NodeJS.ProcessEnv): PatchbayConfig {
  try {
    return loadConfig({ path: values.config, env });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

export function resolveTarget(config: PatchbayConfig, values: Values, env: NodeJS.ProcessEnv): Target {
  let base = values.url ?? env.PATCHBAY_URL;
  if (!base) {
    const bind = config.http.bind;
    const host = bind === '0.0.0.0' || bind === '' ? '127.0.0.1' : bind === '::' ? '[::1]' : bind.includes(':') ? `[${bind}]` : bind;
    base = `http://${host}:${config.http.port}`;
  }
  base = base.replace(/\/+$/, '').replace(/\/ari$/, '');
  const userName = values.user ?? env.PATCHBAY_ARI_USER;
  let password = values.password ?? env.PATCHBAY_ARI_PASSWORD;
  let name = userName;
  if (password === undefined) {
    const users = config.ari.users;
    const user = userName !== undefined ? users.find((u) => u.name === userName) : users.find((u) => !u.readOnly && u.passwordFormat === 'plain');
    if (!user) {
      throw new CliError(
        userName !== undefined
          ? `user '${userName}' is not in the configuration; give --password (or PATCHBAY_ARI_PASSWORD)`
          : 'no read-write user with a plain password in ari.users; give --user and --password (or PATCHBAY_ARI_USER and PATCHBAY_ARI_PASSWORD)',
        EXIT.usage,
      );
    }
    if (user.passwordFormat !== 'plain') throw new CliError(`the password of user '${user.name}' is a crypt hash; give --password (or PATCHBAY_ARI_PASSWORD)`, EXIT.usage);
    name = user.name;
    password = user.password;
  }
  if (name === undefined) throw new CliError('a password was given without a user; give --user (or PATCHBAY_ARI_USER)', EXIT.usage);
  return { base, auth: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`, config };
}

// ---------------------------------------------------------------------------------------------
// HTTP

// ---------------------------------------------------------------------------------------------
// Commands

type Command = (target: Target, args: string[], values: Values, out: AdminIo) => Promise<number>;

function noMoreArgs(args: string[], usage: string, allowed = 0): void {
  if (args.length > allowed) throw new CliError(`unexpected argument '${args[allowed]}' (usage: ${usage})`, EXIT.usage);
}

function listCommand(path: string, headers: readonly string[], row: (item: Row) => string[], usage: string): Command {
  return async (target, args, values, out) => {
    noMoreArgs(args, usage);
    const items = (await ari(target, 'GET', path, `GET ${path}`)) as Row[];
    if (values.json) out.stdout(json(items));
    else out.stdout(table(headers, items.map(row)) + `${items.length} ${usage}\n`);
    return EXIT.ok;
  };
}

const COMMANDS: Record<string, Command> = {
  channels: listCommand('/channels', ['ID', 'NAME', 'STATE', 'CALLER', 'LOCATION', 'CREATED'], (c) => [str(c.id), str(c.name), str(c.state), caller(c), location(c), str(c.creationtime)], 'channels'),
  bridges: listCommand('/bridges', ['ID', 'NAME', 'TYPE', 'TECHNOLOGY', 'CHANNELS', 'CREATOR'], (b) => [str(b.id), str(b.name), str(b.bridge_type), str(b.technology), count(b.channels), str(b.creator)], 'bridges'),
  endpoints: listCommand('/endpoints', ['TECHNOLOGY', 'RESOURCE', 'STATE', 'CHANNELS'], (e) => [str(e.technology), str(e.resource), str(e.state), count(e.channel_ids)], 'endpoints'),
  apps: listCommand('/applications', ['NAME', 'CHANNELS', 'BRIDGES', 'ENDPOINTS', 'DEVICES'], (a) => [str(a.name), count(a.channel_ids), count(a.bridge_ids), count(a.endpoint_ids), count(a.device_names)], 'apps'),

  async show(target, args, values, out) {
    const usage = 'show channel <id>';
    if (args[0] !== 'channel' || args[1] === undefined) throw new CliError(`usage: patchbay ${usage}`, EXIT.usage);
    noMoreArgs(args, usage, 2);
    const id = args[1];
    const channel = (await ari(target, 'GET', `/channels/${encodeURIComponent(id)}`, `channel ${id}`)) as Row;
    if (values.json) {
      out.stdout(json(channel));
      return EXIT.ok;
    }
    const connected = (channel.connected ?? {}) as Row;
    const fields: [string, string][] = [
      ['Id', str(channel.id)],
      ['Name', str(channel.name)],
      ['State', str(channel.state)],
      ['Caller', caller(channel)],
      ['Connected', caller({ caller: connected })],
      ['Location', location(channel)],
      ['Account code', str(channel.accountcode)],
      ['Language', str(channel.language)],
      ['Protocol id', str(channel.protocol_id)],
      ['Created', str(channel.creationtime)],
    ];
    const vars = channel.channelvars as Row | undefined;
    if (vars) for (const [k, v] of Object.entries(vars)) fields.push([`Variable ${k}`, str(v)]);
    const width = Math.max(...fields.map(([k]) => k.length));
    out.stdout(fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v}\n`).join(''));
    return EXIT.ok;
  },

  async hangup(target, args, values, out) {
    const usage = 'hangup <id>';
    if (args[0] === undefined) throw new CliError(`usage: patchbay ${usage}`, EXIT.usage);
    noMoreArgs(args, usage, 1);
    await ari(target, 'DELETE', `/channels/${encodeURIComponent(args[0])}`, `hangup ${args[0]}`);
    out.stdout(values.json ? json({ hungup: args[0] }) : `hung up ${args[0]}\n`);
    return EXIT.ok;
  },

  async originate(target, args, values, out) {
    const usage = 'originate <endpoint> <app|exten@context>';
    const [endpoint, destination] = args;
    if (endpoint === undefined || destination === undefined) throw new CliError(`usage: patchbay ${usage}`, EXIT.usage);
    noMoreArgs(args, usage, 2);
    const query = new URLSearchParams({ endpoint });
    const at = destination.lastIndexOf('@');
    if (at > 0) {
      query.set('extension', destination.slice(0, at));
      query.set('context', destination.slice(at + 1));
      query.set('priority', '1');
    } else {
      query.set('app', destination);
    }
    const channel = (await ari(target, 'POST', `/channels?${query}`, `originate ${endpoint}`)) as Row;
    out.stdout(values.json ? json(channel) : `${str(channel.id)} ${str(channel.name)} ${str(channel.state)}\n`);
    return EXIT.ok;
  },

  async reload(target, args, values, out) {
    noMoreArgs(args, 'reload [module]', 1);
    const reloaded: string[] = [];
    if (args[0] !== undefined) {
      await ari(target, 'PUT', `/asterisk/modules/${encodeURIComponent(args[0])}`, `reload ${args[0]}`);
      reloaded.push(args[0]);
    } else {
      const modules = (await ari(target, 'GET', '/asterisk/modules', 'list modules')) as Row[];
      for (const module of modules) {
        if (str(module.status) !== 'Running') continue;
        const name = str(module.name);
        try {
          await ari(target, 'PUT', `/asterisk/modules/${encodeURIComponent(name)}`, `reload ${name}`);
          reloaded.push(name);
        } catch (err) {
          // Modules that cannot reload answer 409; anything else is a real failure.
          if (!(err instanceof CliError && err.code === EXIT.refused)) throw err;
        }
      }
    }
    out.stdout(values.json ? json({ reloaded }) : `reloaded: ${reloaded.join(', ') || '(nothing)'}\n`);
    return EXIT.ok;
  },

  async stop(target, args, values, out) {
    noMoreArgs(args, 'stop [--now | --gracefully]');
    if (values.now && values.gracefully) throw new CliError('give --now or --gracefully, not both', EXIT.usage);
    const dataDir = target.config.dirs.data;
    const pid = readPidFile(dataDir);
    if (pid === null) throw new CliError(`no server pid in ${pidFilePath(dataDir)} (is the server running on this host with this data directory?)`, EXIT.unreachable);
    if (!alive(pid)) throw new CliError(`the server (pid ${pid} in ${pidFilePath(dataDir)}) is not running`, EXIT.unreachable);
    const timeoutSeconds = values.timeout === undefined ? Infinity : Number(values.timeout);
    if (!(timeoutSeconds > 0)) throw new CliError(`--timeout must be a positive number of seconds, got '${values.timeout}'`, EXIT.usage);
    if (values.gracefully) {
      // The server refuses new calls from now on and exits by itself once the last channel ends.
      const signal = stopSignal(out);
      process.kill(pid, 'SIGUSR1');
      const deadline = Date.now() + timeoutSeconds * 1000;
      let announced = -1;
      try {
        while (alive(pid)) {
          const channels = await channelCount(target);
          if (channels !== undefined && channels !== announced && !values.json) out.stdout(`refusing new calls; waiting for ${channels} channel(s) to end\n`);
          if (channels !== undefined) announced = channels;
          const gaveUp = Date.now() >= deadline ? `${announced} channel(s) still up after ${timeoutSeconds} s` : signal.signal.aborted ? 'interrupted' : undefined;
          if (gaveUp) {
            if (alive(pid)) process.kill(pid, 'SIGUSR2');
            throw new CliError(`${gaveUp}; the server was not stopped and takes calls again`, EXIT.failure);
          }
          await sleep(250, signal.signal);
        }
      } finally {
        signal.dispose();
      }
    } else {
      process.kill(pid, 'SIGTERM');
      // The server ends its calls, finalises recordings and exits; wait for it (bounded).
      const deadline = Date.now() + 30_000;
      while (alive(pid) && Date.now() < deadline) await sleep(100);
      if (alive(pid)) throw new CliError(`the server (pid ${pid}) is still running 30 s after SIGTERM`, EXIT.failure);
    }
    out.stdout(values.json ? json({ stopped: pid }) : `stopped (pid ${pid})\n`);
    return EXIT.ok;
  },

  async events(target, args, values, out) {
    noMoreArgs(args, 'events [--app X]');
    const limit = values.limit === undefined ? Infinity : Number(values.limit);
    if (!(Number.isInteger(limit) && limit > 0) && limit !== Infinity) throw new CliError(`--limit must be a positive integer, got '${values.limit}'`, EXIT.usage);
    // A private application subscribed to everything: the CLI never connects as an existing
    // application (that would take it over, ApplicationReplaced). --app filters on the channels'
    // Stasis application instead.
    const ownApp = `patchbay-cli-${process.pid}-${Date.now().toString(36)}`;
    const url = `${target.base.replace(/^http/, 'ws')}/ari/events?app=${encodeURIComponent(ownApp)}&subscribeAll=true`;
    const appFilter = values.app === undefined ? undefined : new AppEventFilter(values.app);
    const socket = new WebSocket(url, { headers: { authorization: target.auth } });
    const stop = stopSignal(out);
    try {
      return await new Promise<number>((resolve, reject) => {
        let seen = 0;
        let done = false;
        const finish = (): void => {
          done = true;
          socket.close();
          resolve(EXIT.ok);
        };
        stop.signal.addEventListener('abort', finish, { once: true });
        socket.once('unexpected-response', (_req, res) => {
          const status = res.statusCode ?? 0;
          reject(new CliError(`events: ${status} ${status === 401 ? 'the server refused the credentials' : (res.statusMessage ?? '')}`, status === 401 || status === 403 ? EXIT.auth : EXIT.refused));
        });
        socket.once('error', (err) => {
          const code = (err as NodeJS.ErrnoException).code;
          reject(new CliError(`cannot reach the server at ${target.base}: ${code ?? err.message}`, EXIT.unreachable));
        });
        socket.once('close', () => resolve(EXIT.ok));
        socket.on('message', (data) => {
          if (done) return;
          const event = JSON.parse(String(data)) as Row;
          if (appFilter && !appFilter.concerns(event)) return;
          out.stdout(values.json ? `${JSON.stringify(event)}\n` : formatEvent(event));
          seen += 1;
          if (seen >= limit) finish();
        });
        socket.once('open', () => {
          if (!values.json) out.stderr(`listening for events${values.app !== undefined ? ` of application ${values.app}` : ''} (Ctrl-C ends)\n`);
        });
      });
    } finally {
      stop.dispose();
      socket.terminate();
    }
  },
};

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits ms, or until the signal aborts; either way the listener it added is gone (a loop of these must not pile listeners up). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** How many channels the server has; undefined while it cannot answer (it may be exiting). */
async function channelCount(target: Target): Promise<number | undefined> {
  try {
    return ((await ari(target, 'GET', '/channels', 'list channels')) as Row[]).length;
  } catch {
    return undefined;
  }
}

/** io.signal, or SIGINT while the command runs. */
function stopSignal(io: AdminIo): { signal: AbortSignal; dispose(): void } {
  if (io.signal) return { signal: io.signal, dispose() {} };
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => void process.off('SIGINT', onSigint) };
}

// ---------------------------------------------------------------------------------------------
// dialplan show: ARI has no dialplan listing, so the CLI reads the file the configuration names
// (or the embedded default) and prints it parsed. This is the file on disk: edits made since the
// server's last reload show here before the server runs them.

function dialplanShow(config: PatchbayConfig, args: string[], values: Values, out: AdminIo): number {
  if (args[0] !== 'show') throw new CliError('usage: patchbay dialplan show [context]', EXIT.usage);
  noMoreArgs(args, 'dialplan show [context]', 2);
  const wanted = args[1];
  const file = config.dialplan.file;
  let parsed: ParsedDialplan;
  try {
    parsed =
      file === null
        ? parseDialplan(DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE)
        : parseDialplan(readFileSync(file, 'utf8'), file, { include: includeReader(file) });
  } catch (err) {
    throw new CliError(`dialplan: ${(err as Error).message.split('\n')[0]}`, EXIT.usage);
  }
  const contexts = wanted === undefined ? parsed.contexts : parsed.contexts.filter((c) => c.name === wanted);
  if (wanted !== undefined && contexts.length === 0) throw new CliError(`there is no context '${wanted}' in ${parsed.file}`, EXIT.notFound);
  if (values.json) {
    out.stdout(json({ file: parsed.file, contexts }));
    return EXIT.ok;
  }
  let text = `; ${file === null ? '(embedded default dialplan)' : file}\n`;
  for (const context of contexts) {
    text += `[ Context '${context.name}' ]\n`;
    for (const extension of context.extensions) {
      const name = extension.callerId ? `${extension.name}/${extension.callerId}` : extension.name;
      let first = true;
      if (extension.hint !== undefined) {
        text += `  '${name}' => hint: ${extension.hint}\n`;
        first = false;
      }
      for (const step of extension.steps) {
        const head = first ? `  '${name}' =>` : '';
        first = false;
        const label = step.label ? `(${step.label})` : '';
        text += `${head.padEnd(22)} ${`${step.priority}.${label}`.padEnd(8)} ${step.app}(${step.appData})\n`;
      }
    }
    for (const include of context.includes) text += `  Include =>           '${include.context}'${include.timing ? ` ${include.timing}` : ''}\n`;
    for (const pattern of context.ignorePatterns) text += `  Ignore pattern =>    '${pattern}'\n`;
    text += '\n';
  }
  const steps = contexts.reduce((n, c) => n + c.extensions.reduce((m, e) => m + e.steps.length, 0), 0);
  const extensions = contexts.reduce((n, c) => n + c.extensions.length, 0);
  text += `-= ${extensions} extensions (${steps} priorities) in ${contexts.length} contexts. =-\n`;
  out.stdout(text);
  return EXIT.ok;
}
