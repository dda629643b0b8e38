// The server side of bench/sip-capacity.ts: a real Patchbay in this (child) process, configured for
// thousands of SIP calls, that prints one JSON line ({ url, sipPort, workers }) on stdout and stops
// when its parent closes stdin. Warnings and errors of its log go to stderr (the parent keeps the last).
// Usage (by the bench): node --import tsx bench/sip-capacity-target.ts '<TargetPlan as JSON>'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DeepPartialYaml } from '../src/config/config.ts';

export interface TargetPlan {
  /** The most calls a step places: the channel limit is made from it. */
  readonly maxCalls: number;
  /** Where the B2BUA scenario's Dial() goes: the answering SIPp's `host:port`. */
  readonly uas: string;
  /** `media.workers` (issue 25); null leaves the server's default. */
  readonly workers: number | null;
  /** `media.worker_relay`: false sends every frame of a B2BUA call through the main thread (the figures before the relay). */
  readonly relay?: boolean;
  /** `media.worker_playback`: false makes every playback frame on the main thread (the figures before the playback fast path). */
  readonly workerPlayback?: boolean;
  /** `media.worker_mix`: false mixes every conference bridge on the main thread (the figures before the worker mix). */
  readonly workerMix?: boolean;
  /** `media.worker_recording`: false writes every recording on the main thread (the figures before the recording fast path). */
  readonly workerRecording?: boolean;
  /** The server's data directory: inside the bench's work directory, which the bench removes even after a kill. */
  readonly dataDir: string;
  /**
   * bench/webrtc-calls.ts: SIP over WebSocket (a pjsip.conf with a `ws` transport beside UDP) and a
   * `webrtc=yes` endpoint `webrtc` allowing these codecs; its callers each hold one WebSocket.
   */
  readonly webrtc?: { readonly allow: string };
}

/** The extensions SIPp calls: one per scenario of the bench. */
export const EXTENSIONS = { echo: '200', playback: '300', b2bua: '400', conference: '500', record: '600' } as const;

/** The server's RTP ports: far from the SIPp media ports the bench uses (40000 and up). */
export const SERVER_RTP_PORTS = { start: 10000, end: 29999 } as const;

function dialplan(uas: string): string {
  return [
    '[capacity]',
    `exten => ${EXTENSIONS.echo},1,Answer()`,
    ' same => n,Echo()',
    // A prompt played over and over (tt-monkeys: 10 s of Asterisk's core sounds) for as long as the call lasts.
    `exten => ${EXTENSIONS.playback},1,Answer()`,
    ' same => n(again),Playback(tt-monkeys)',
    ' same => n,Goto(again)',
    // Two SIP legs bridged by Dial(): the caller's and one to the SIPp that answers and echoes.
    `exten => ${EXTENSIONS.b2bua},1,Dial(PJSIP/uas/sip:echo@${uas},30)`,
    ' same => n,Hangup()',
    // Conference: the bench's ARI application puts each three calls in a mixing bridge (sip-capacity-conference.ts).
    `exten => ${EXTENSIONS.conference},1,Answer()`,
    ' same => n,Stasis(conf)',
    ' same => n,Hangup()',
    // Record: what each caller says written into a WAV file of its own until it hangs up (quiet: no beep;
    // x: # does not end it; k: kept on hang-up), in the recordings directory of the bench's data directory.
    `exten => ${EXTENSIONS.record},1,Answer()`,
    ' same => n,Record(call-${UNIQUEID}.wav,0,0,qxk)',
    ' same => n,Hangup()',
    '',
  ].join('\n');
}

/**
 * bench/webrtc-calls.ts's transports and endpoint: UDP on an ephemeral port (as `sip.port: 0` gives
 * the other benches), SIP over WebSocket on the HTTP server's /ws, and `webrtc` (ICE-lite,
 * DTLS-SRTP, rtcp-mux, AVPF), found by the callers' From user and asking no authentication.
 */
function webrtcPjsipConf(allow: string): string {
  if (!/^[a-z0-9,!]+$/.test(allow)) throw new Error(`allow=${allow}: codec names only`);
  return ['[udp]', 'type=transport', 'protocol=udp', 'bind=127.0.0.1:0', '', '[ws]', 'type=transport', 'protocol=ws', '',
    '[webrtc]', 'type=endpoint', 'context=capacity', `allow=${allow}`, 'webrtc=yes', ''].join('\n');
}

function overrides(plan: TargetPlan, dataDir: string, dialplanFile: string, pjsipConf?: string): DeepPartialYaml {
  return {
    http: { port: 0, bind: '127.0.0.1' },
    // bench/webrtc-calls.ts: the callers' WebSockets are HTTP connections from 127.0.0.1 too (256 a source
    // by default: past it the 257th caller, and the bench's own GET /metrics, are refused).
    ...(pjsipConf ? { http_connections: { max_per_address: plan.maxCalls + 100 } } : {}),
    dirs: { data: dataDir },
    ari: { developer_mode: false },
    logging: { console: false, level: 'warn' },
    dialplan: { file: dialplanFile },
    sip: {
      port: 0,
      rtp_port_start: SERVER_RTP_PORTS.start,
      rtp_port_end: SERVER_RTP_PORTS.end,
      // All the bench's calls come from one endpoint; the default (100) would answer the 101st 486.
      max_calls_per_endpoint: 0,
      // bench/webrtc-calls.ts: one WebSocket per caller, all from 127.0.0.1 (the default allows 32 a source).
      ...(pjsipConf ? { pjsip_conf: pjsipConf, tcp: { max_connections: plan.maxCalls + 100, max_connections_per_source: plan.maxCalls + 100 } } : {}),
    },
    // Both legs of every B2BUA call, and room for the calls of a step still ending as the next begins.
    max_channels: 2 * plan.maxCalls + 200,
    config_objects: {
      res_pjsip: {
        endpoint: {
          load: { context: 'capacity', allow: 'ulaw' },
          uas: { context: 'capacity', allow: 'ulaw' },
          // bench/srtp-calls.ts's raw SDES-SRTP callers (SIPp 3.6 has no SRTP).
          srtp: { context: 'capacity', allow: 'ulaw', media_encryption: 'sdes' },
        },
      },
    },
  };
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? '{}') as TargetPlan;
  // PATCHBAY_BENCH_ROOT (the bench's --server): a compiled server, as production runs it; the
  // sources through tsx otherwise.
  const compiled = process.env.PATCHBAY_BENCH_ROOT;
  const module = (path: string): string => (compiled ? pathToFileURL(join(compiled, `${path}.js`)).href : `../src/${path}.ts`);
  const { loadConfig, ConfigError } = (await import(module('config/config'))) as typeof import('../src/config/config.ts');
  const { startServer } = (await import(module('server'))) as typeof import('../src/server.ts');
  const dataDir = plan.dataDir;
  mkdirSync(dataDir, { recursive: true });
  const dialplanFile = join(dataDir, 'extensions.conf');
  writeFileSync(dialplanFile, dialplan(plan.uas));
  let pjsipConf: string | undefined;
  if (plan.webrtc) {
    pjsipConf = join(dataDir, 'pjsip.conf');
    writeFileSync(pjsipConf, webrtcPjsipConf(plan.webrtc.allow));
  }
  const base = overrides(plan, dataDir, dialplanFile, pjsipConf);
  let workers: 'default' | 'applied' | 'unsupported' = 'default';
  let config;
  const switches = {
    ...(plan.relay === false ? { worker_relay: false } : {}),
    ...(plan.workerPlayback === false ? { worker_playback: false } : {}),
    ...(plan.workerMix === false ? { worker_mix: false } : {}),
    ...(plan.workerRecording === false ? { worker_recording: false } : {}),
  };
  if (plan.workers === null) config = loadConfig({ path: null, env: {}, overrides: Object.keys(switches).length > 0 ? { ...base, media: switches } : base });
  else {
    try {
      // Not a literal: the setting is not in this build's schema until issue 25's workers land.
      const withWorkers = { ...base, media: { workers: plan.workers, ...switches } };
      config = loadConfig({ path: null, env: {}, overrides: withWorkers });
      workers = 'applied';
    } catch (error) {
      // A build without media.workers (before issue 25's workers land): the same bench runs without it.
      if (!(error instanceof ConfigError) || !error.key.startsWith('media')) throw error;
      config = loadConfig({ path: null, env: {}, overrides: base });
      workers = 'unsupported';
    }
  }
  const sink = new Writable({
    write: (chunk, _encoding, done) => {
      process.stderr.write(chunk);
      done();
    },
  });
  const server = await startServer(config, { logDestination: sink });
  // Calls placed before the media workers have loaded run on the main thread for good (seconds under
  // tsx on a busy machine): the bench measures the workers, so it starts once they are ready.
  const pool = server.core.pjsip.mediaWorkers;
  for (let waited = 0; pool && !pool.loads().every((load) => load.running) && waited < 60_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  process.stdout.write(`${JSON.stringify({ url: server.url, sipPort: server.core.pjsip.port, workers })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void server.stop().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

// Run only as the child process (the bench imports the constants above).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
