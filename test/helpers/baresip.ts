// What the baresip interop tests share: whether baresip is installed, its modules, and talking to
// it through its ctrl_tcp module (netstrings of JSON).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { EventSocket } from './server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export const HAVE_BARESIP = spawnSync('baresip', ['-h'], { encoding: 'utf8' }).error === undefined;
export const BARESIP_MODULES = '/usr/lib/baresip/modules';
export const BARESIP_WAIT = 15_000;


export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = BARESIP_WAIT): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends one command to baresip's ctrl_tcp (a netstring of JSON) and returns its response. */
export function ctrl(port: number, command: string, params: string): Promise<Json> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const body = JSON.stringify({ command, params, token: 'patchbay' });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no ctrl_tcp response to ${command}`));
    }, BARESIP_WAIT);
    socket.on('connect', () => socket.write(`${Buffer.byteLength(body)}:${body},`));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      // Responses and events arrive as netstrings; take the response to our command.
      for (;;) {
        const colon = received.indexOf(':');
        if (colon < 0) return;
        const length = Number(received.slice(0, colon));
        if (received.length < colon + 1 + length + 1) return;
        const message = JSON.parse(received.slice(colon + 1, colon + 1 + length)) as Json;
        received = received.slice(colon + 1 + length + 1);
        if (message.response) {
          clearTimeout(timer);
          socket.end();
          resolve(message);
          return;
        }
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export async function nextOfType(events: EventSocket, type: string, channelId?: string): Promise<Json> {
  const deadline = Date.now() + BARESIP_WAIT;
  for (;;) {
    const message = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (message.type === type && (channelId === undefined || message.channel?.id === channelId)) return message;
  }
}

/** Writes a baresip home (config, empty contacts) in `work`; `extraConfig` lines are appended. */
export function writeBaresipHome(work: string, ports: { phone: number; ctrl: number }, extraConfig: readonly string[] = []): string {
  const home = join(work, 'baresip');
  mkdirSync(home);
  writeFileSync(
    join(home, 'config'),
    [
      'poll_method epoll',
      `sip_listen 127.0.0.1:${ports.phone}`,
      `module_path ${BARESIP_MODULES}`,
      'module g711.so',
      'module ausine.so',
      'module_app account.so',
      'module_app menu.so',
      'module_app ctrl_tcp.so',
      `ctrl_tcp_listen 127.0.0.1:${ports.ctrl}`,
      'audio_source ausine,440',
      'ausrc_srate 48000',
      'ausrc_channels 2',
      'audio_player none,none',
      'audio_alert none,none',
      'rtp_timeout 0',
      ...extraConfig,
      '',
    ].join('\n'),
  );
  writeFileSync(join(home, 'contacts'), '');
  return home;
}

/** Writes the end of a failed test's baresip output into the test log (as `# ` comment lines). */
export function showBaresipOutput(output: string): void {
  process.stdout.write(`# baresip output (last 6000 characters):\n${output.slice(-6000).replace(/\r/g, '').replace(/^/gm, '# ')}\n`);
}

/** Stops a baresip still running: SIGTERM, then SIGKILL after 3 s. */
export async function stopBaresip(baresip: ChildProcess | undefined): Promise<void> {
  if (!baresip || baresip.exitCode !== null) return;
  const exited = new Promise((resolve) => baresip.once('exit', resolve));
  baresip.kill('SIGTERM');
  const timer = setTimeout(() => baresip.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** The password of the `alice` of aliceWithDigest and aliceAccount. */
export const ALICE_PASSWORD = 'secret';

/**
 * res_pjsip objects for `alice`, a phone that registers with digest into context sip-in (u-law):
 * her endpoint, its userpass auth and a one-contact AOR; `aor` and `endpoint` add options of a test's own.
 */
export function aliceWithDigest(aor: Json = {}, endpoint: Json = {}): Json {
  return {
    endpoint: { alice: { context: 'sip-in', allow: 'ulaw', auth: 'alice-auth', aors: 'alice', ...endpoint } },
    auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: ALICE_PASSWORD } },
    aor: { alice: { max_contacts: 1, remove_existing: 'yes', ...aor } },
  };
}

/** baresip's accounts line for alice registering (every 60 s) with digest at `sipPort`, on PCMU; `extra` adds `;param`s. */
export function aliceAccount(sipPort: number, transport: 'udp' | 'tls' = 'udp', extra = ''): string {
  return `<sip:alice@127.0.0.1:${sipPort};transport=${transport}>;auth_pass=${ALICE_PASSWORD};audio_codecs=PCMU;regint=60${extra}\n`;
}

/** baresip started on the home `home` (from `work`), everything it prints handed to `output`; `-s` logs SIP too. */
export function spawnBaresip(home: string, work: string, output: (text: string) => void, args: readonly string[] = ['-s']): ChildProcess {
  const child = spawn('baresip', ['-f', home, ...args], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => output(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output(chunk.toString()));
  return child;
}
