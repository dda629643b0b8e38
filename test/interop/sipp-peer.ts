// SIPp as a real peer for the interop tests: runs one scenario of test/sip/scenarios/ (one call,
// -m 1) from a given local address and port, and reports its exit status and the end of its
// output. Also the small waits every such test needs (the next ARI event that matches).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { basename, isAbsolute, join } from 'node:path';
import assert from 'node:assert/strict';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { fixtureInSuite } from '../helpers/suite-fixture.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
export const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
export const HAVE_SOX = spawnSync('sox', ['--version'], { encoding: 'utf8' }).error === undefined;

export interface SippRun {
  readonly status: number | null;
  readonly output: string;
  /** Every SIP message SIPp sent and received, when run with `trace` (-trace_msg); else empty. */
  readonly messages: string;
}

export interface SippOptions {
  /** Local address SIPp binds (a distinct 127.0.0.x plays another host). Default 127.0.0.1. */
  readonly address?: string;
  /** Local SIP port. Default a random one in 20000–39999. */
  readonly port?: number;
  /** Working directory (audio.wav for rtp_stream, message logs). */
  readonly cwd: string;
  readonly timeoutMs?: number;
  /** Keep every message SIPp sends and receives (SippRun.messages, read with tracedMessages()). */
  readonly trace?: boolean;
}

/** A random port unlikely to collide with the other tests' (SIPp binds it itself). */
export function randomPort(): number {
  return 20000 + Math.floor(Math.random() * 20000);
}

/**
 * Starts SIPp on `scenario` (a file of SCENARIOS, or an absolute path: a test's own copy) with `args`
 * (the remote target and -set/-s options among them). `listening` settles once SIPp holds its port:
 * a test that makes the server call SIPp awaits it, since a loaded machine starts SIPp late.
 */
export function sipp(scenario: string, args: readonly string[], options: SippOptions): { done: Promise<SippRun>; port: number; listening: Promise<void> } {
  const port = options.port ?? randomPort();
  const timeout = Math.round((options.timeoutMs ?? 20_000) / 1000);
  const messageFile = join(options.cwd, `${basename(scenario)}-${port}.messages.log`);
  const trace = options.trace ? ['-trace_msg', '-message_file', messageFile] : [];
  // SIPp's own account of a failure (which message was unexpected, and where), told with its output.
  const errorFile = join(options.cwd, `${basename(scenario)}-${port}.errors.log`);
  const child = spawn('sipp', ['-sf', isAbsolute(scenario) ? scenario : join(SCENARIOS, scenario), '-i', options.address ?? '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', `${timeout}s`, '-timeout_error', '-trace_err', '-error_file', errorFile, ...trace, ...args], { cwd: options.cwd });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const done = new Promise<SippRun>((resolve) =>
    child.on('exit', (status) => {
      const errors = status !== 0 && existsSync(errorFile) ? `\nSIPp's errors:\n${readFileSync(errorFile, 'latin1').slice(-2500)}` : '';
      resolve({ status, output: output.slice(-2000) + errors, messages: options.trace && existsSync(messageFile) ? readFileSync(messageFile, 'latin1') : '' });
    }),
  );
  // Ready for the server's requests: SIPp holds its port (or has already ended, which `done` tells).
  // Over TCP or TLS (-t t1, tn, l1, ln) it must listen: a connection tried before is refused at once.
  const transport = args[args.indexOf('-t') + 1];
  const listening = Promise.race([sippListening(port, 20_000, args.includes('-t') && /^[tl]/.test(transport ?? '') ? 'tcp' : 'udp'), done.then(() => undefined)]);
  listening.catch(() => undefined); // told to whoever awaits it; unawaited, not an unhandled rejection
  return { done, port, listening };
}

/** The SIP messages of a traced SIPp run whose first line matches `firstLine`, in order. */
export function tracedMessages(run: SippRun, firstLine: RegExp): string[] {
  return run.messages
    .split(/-{20,}.*\r?\n/)
    .map((block) => block.replace(/^(?:\s*\r?\n)+/, '').replace(/^.*(?:message (?:received|sent)|UDP message).*\r?\n/gim, '').trimStart())
    .filter((block) => firstLine.test(block.split(/\r?\n/)[0] ?? ''));
}

/** The next event matching `match` (others are skipped), within `timeoutMs`. */
export async function nextEvent(events: EventSocket, match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

export const ofChannel = (type: string, id: string) => (event: Json) => event.type === type && event.channel?.id === id;

/** Polls `probe` every 50 ms until it gives a value, or fails naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until something (SIPp) holds UDP `port` (or, for `tcp`, listens on TCP `port`: state 0A),
 * read from the kernel's socket table, so that looking never takes the port from under a SIPp that
 * is binding it. Where there is no /proc, a pause.
 */
export async function sippListening(port: number, timeoutMs = 20_000, transport: 'udp' | 'tcp' = 'udp'): Promise<void> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const held = async (): Promise<true | undefined> => {
    try {
      const table = await readFile(`/proc/net/${transport}`, 'utf8');
      return table.split('\n').some((line) => {
        const fields = line.trim().split(/\s+/);
        return fields[1]?.endsWith(hex) === true && (transport === 'udp' || fields[3] === '0A');
      })
        ? true
        : undefined;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return true;
    }
  };
  await waitFor(`SIPp listening on ${port}`, held, timeoutMs);
}

/** A server for SIPp to call: its work directory (extensions.conf written there), SIP target and app events. */
export interface SippServer {
  readonly work: string;
  readonly server: TestServer;
  readonly events: EventSocket;
  /** `host:port` of the server's SIP listener, SIPp's remote. */
  target(): string;
  close(): Promise<void>;
}

/**
 * Starts a server with `dialplan` (extensions.conf text) and `resPjsip` (config_objects.res_pjsip),
 * and an events socket subscribed to everything for `app`. `settings` adds settings of the suite's
 * own (media workers, sound directories…), made from the work directory when it needs files there.
 */
export async function startSippServer(name: string, dialplan: string, resPjsip: Json, app: string, settings: Json | ((work: string) => Json) = {}): Promise<SippServer> {
  const work = mkdtempSync(join(tmpdir(), `patchbay-${name}-`));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, dialplan);
  const own = typeof settings === 'function' ? settings(work) : settings;
  const server = await startTestServer({ ...own, config_objects: { res_pjsip: resPjsip }, dialplan: { file: dialplanFile } } as never);
  const events = await server.events(`app=${app}&subscribeAll=true`);
  return {
    work,
    server,
    events,
    target: () => `127.0.0.1:${server.core.pjsip.port}`,
    async close() {
      await events.close();
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/**
 * res_pjsip objects for SIPp phones in `context`, each offering u-law only: a phone with a port is
 * also reachable (an AOR of its name with a contact on 127.0.0.1:port); one without only calls in.
 */
export function sippPhones(phones: Record<string, number | undefined>, context = 'phones'): Json {
  const endpoint: Json = {};
  const aor: Json = {};
  for (const [name, port] of Object.entries(phones)) {
    endpoint[name] = port === undefined ? { context, allow: 'ulaw' } : { context, allow: 'ulaw', aors: name };
    if (port !== undefined) aor[name] = { contact: `sip:${name}@127.0.0.1:${port}` };
  }
  return { endpoint, aor };
}

/**
 * Registers `before`/`after` hooks in the current file (or suite) that run `start` and close what it
 * started, unless `skip` says why not (SIPp or sox missing). The returned server reads the started
 * one: use it inside the tests only, after `before` has run.
 */
export function sippServerInSuite(skip: string | false, start: () => Promise<SippServer>): SippServer {
  return fixtureInSuite('the SIPp test server', async () => (skip ? undefined : start()), (server) => server.close());
}

/**
 * SIPp calling `exten` of `setup` as `caller` on `scenario` (one that streams audio.wav once
 * answered), from its own SIP port and an even media port of its own.
 */
export function sippCall(setup: SippServer, caller: string, scenario: string, exten: string, extra: readonly string[] = []): { done: Promise<SippRun>; port: number } {
  const mediaPort = 2 * Math.floor(randomPort() / 2);
  return sipp(scenario, [setup.target(), '-s', exten, '-set', 'caller', caller, '-mp', String(mediaPort), ...extra], { cwd: setup.work, timeoutMs: 60_000 });
}

/** Reads `setup`'s events into `seen` until `channelId`'s ChannelDestroyed (included); returns `seen`. */
export async function eventsUntilDestroyed(setup: SippServer, channelId: string, seen: Json[], timeoutMs = 45_000): Promise<Json[]> {
  await nextEvent(setup.events, (event) => (seen.push(event), event.type === 'ChannelDestroyed' && event.channel?.id === channelId), timeoutMs);
  return seen;
}

/** Writes `audio.wav` in `work`, the u-law sine SIPp streams (`-mp` scenarios play it). */
export function writeSippTone(work: string, hz: number, seconds: number, volume: number): void {
  spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', String(seconds), 'sine', String(hz), 'vol', String(volume)]);
}

/** Runs `work` beside SIPp's `run`; when it fails, the error says what SIPp saw last (it ends by itself on a message its scenario did not expect). */
export async function explained<T>(run: { done: Promise<SippRun> }, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const ended = await Promise.race([run.done, new Promise<undefined>((resolve) => setTimeout(resolve, 5000))]);
    const seen = ended ? `SIPp ended (status ${ended.status}); its last messages:\n${ended.messages.slice(-3000)}\n${ended.output.slice(-600)}` : 'SIPp is still running';
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${seen}`, { cause: error });
  }
}

/** SIPp playing a callee the server calls: where SIPp listens, and who the server calls there. */
export interface SippCallee {
  /** The port of the endpoint's static contact, SIPp's local port. */
  readonly port: number;
  /** `PJSIP/<endpoint>`, the ARI originate's endpoint. */
  readonly endpoint: string;
  /** The application the originated channel enters. */
  readonly app: string;
  /** How long the next event may take (generous: a loaded machine). */
  readonly eventTimeoutMs: number;
}

/**
 * Starts SIPp as `callee` on `scenario` (test/sip/scenarios/, traced), originates a call to it from ARI and waits until it is answered; then
 * `answered` drives the call (channel `id`) until SIPp's scenario ends it. Returns SIPp's run, whose
 * exit status was 0; a failure on the way says what SIPp saw last.
 */
export async function callSippCallee(setup: SippServer, callee: SippCallee, scenario: string, answered: (id: string) => Promise<void>): Promise<SippRun> {
  const run = sipp(scenario, [], { cwd: setup.work, port: callee.port, timeoutMs: 60_000, trace: true });
  // SIPp binds its port as it starts; the INVITE must not come before.
  await run.listening;
  await explained(run, async () => {
    const created = await setup.server.ari(`/channels?endpoint=${callee.endpoint}&app=${callee.app}`, { method: 'POST' });
    const body = await created.text();
    assert.equal(created.status, 200, body);
    const id = (JSON.parse(body) as Json).id as string;
    await nextEvent(setup.events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up', callee.eventTimeoutMs);
    await answered(id);
  });
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  return result;
}
