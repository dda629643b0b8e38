// A linphonec softphone (liblinphone 5, Debian's linphone-cli) a test starts as a real peer: its own
// home and linphonerc (one account registering with digest credentials, SIP and RTP on 127.0.0.1),
// audio from a WAV file and what it hears written to another ("soundcard use files"), driven by
// the commands linphonec reads on its standard input, its call states read from its standard output.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, freeSipPhonePort } from './ports.ts';

export const HAVE_LINPHONEC = spawnSync('linphonec', ['-v'], { encoding: 'utf8' }).error === undefined;

export interface LinphoneAccount {
  readonly user: string;
  readonly password: string;
  /** Patchbay's SIP port on 127.0.0.1. */
  readonly serverPort: number;
  /** Answer incoming calls at once (linphonec -a). */
  readonly autoAnswer?: boolean;
}

/** One linphonec process: an account, a WAV it plays into its calls and one it records them into. */
export class LinphonePhone {
  #child: ChildProcess | undefined;
  #output = '';
  #sipPort = 0;
  readonly #home: string;
  readonly #waiters = new Set<() => void>();

  constructor(
    readonly account: LinphoneAccount,
    work: string,
  ) {
    this.#home = join(work, `linphone-${account.user}`);
  }

  /** What linphonec printed so far (its own lines, not liblinphone's log). */
  get output(): string {
    return this.#output;
  }

  get sipPort(): number {
    return this.#sipPort;
  }

  async start(): Promise<void> {
    // liblinphone keeps its call history here and stays out of its 'On' state (answering
    // incoming calls 503) when it cannot open it.
    mkdirSync(join(this.#home, '.local', 'share', 'linphone'), { recursive: true });
    mkdirSync(join(this.#home, '.config'), { recursive: true });
    this.#sipPort = await freeSipPhonePort();
    const rtpPort = await freeRtpPair();
    const { user, password, serverPort } = this.account;
    // register_only_when_network_is_up=0: a test machine may have no default route, and linphone
    // would then wait for "the network" before registering at all.
    const rc = [
      '[sip]',
      `sip_port=${this.#sipPort}`,
      'sip_tcp_port=0',
      'bind_address=127.0.0.1',
      'register_only_when_network_is_up=0',
      'default_proxy=0',
      '[rtp]',
      `audio_rtp_port=${rtpPort}`,
      'bind_address=127.0.0.1',
      '[video]',
      'enabled=0',
      'automatically_initiate=0',
      '[sound]',
      'echo_cancellation=0',
      '[proxy_0]',
      `reg_proxy=<sip:127.0.0.1:${serverPort}>`,
      `reg_identity=sip:${user}@127.0.0.1`,
      'reg_expires=120',
      'reg_sendregister=1',
      'publish=0',
      '[auth_info_0]',
      `username=${user}`,
      `passwd=${password}`,
      'realm=asterisk',
      '',
    ].join('\n');
    const config = join(this.#home, 'linphonerc');
    writeFileSync(config, rc);
    const args = ['-c', config, '-d', process.env.PATCHBAY_LINPHONE_DEBUG ?? '0', ...(this.account.autoAnswer ? ['-a'] : [])];
    const child = spawn('linphonec', args, { cwd: this.#home, env: { ...process.env, HOME: this.#home }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child = child;
    const take = (chunk: Buffer): void => {
      this.#output = (this.#output + chunk.toString()).slice(-200_000);
      for (const wake of [...this.#waiters]) wake();
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', () => undefined);
    await this.waitFor(/linphonec> /, 15_000);
    // linphonec's own start may leave the SIP port unset: set it again, then audio to files.
    this.command(`ports sip ${this.#sipPort}`);
    this.command('soundcard use files');
    await this.waitFor(/Using wav files instead of soundcard/, 10_000);
  }

  command(line: string): void {
    this.#child?.stdin?.write(`${line}\n`);
  }

  /** The audio it sends from now on: a WAV (8 or 16 kHz mono 16-bit). */
  play(path: string): void {
    this.command(`play ${path}`);
  }

  /** Where what it hears is written (a WAV linphonec writes while a call runs). */
  record(path: string): void {
    this.command(`record ${path}`);
  }

  /** Waits until its output (from `from` on) matches; returns the match. */
  waitFor(pattern: RegExp, timeoutMs = 20_000, from = 0): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(this.#output.slice(from));
        if (!match) return false;
        this.#waiters.delete(wake);
        clearTimeout(timer);
        resolve(match);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new Error(`linphonec ${this.account.user}: ${pattern} not seen within ${timeoutMs} ms\n${this.#output.slice(-3000)}`));
      }, timeoutMs);
      this.#waiters.add(wake);
      check();
    });
  }

  /** Where its output ends now: a mark for waitFor's `from`. */
  mark(): number {
    return this.#output.length;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.command('terminate all');
    this.command('quit');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** An even port whose odd neighbour is free too (RTP and RTCP). */
async function freeRtpPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port % 2 === 0 && port < 65534) return port;
  }
  return freePort();
}
