// Digest guessing against inbound SIP authentication (issue 21, item 7): one source sends REGISTERs
// with wrong passwords as fast as the answers come (the nonce reused, as svcrack does) for a few
// seconds, then tries the right one. Reports answers per second, how many guesses the server really
// checked (patchbay_sip_auth_failures_total when the server has it) and whether the right password
// still got in at the end. Bounded: at most 20 s.
// Usage: tsx bench/sip-guess.ts [--seconds 5] [--target <checkout root>]
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { digestHa1, digestResponse } from '../src/sip/auth/digest.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, target: { type: 'string', default: new URL('..', import.meta.url).pathname } } });
const seconds = Math.min(Number(values.seconds), 20);
const { loadConfig } = (await import(`${values.target}/src/config/config.ts`)) as typeof import('../src/config/config.ts');
const { startServer } = (await import(`${values.target}/src/server.ts`)) as typeof import('../src/server.ts');

const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-guess-'));
const config = loadConfig({
  path: null,
  env: {},
  overrides: {
    http: { port: 0 },
    sip: { port: 0 },
    dirs: { data: dataDir },
    logging: { console: false, level: 'info' },
    config_objects: {
      res_pjsip: {
        endpoint: { alice: { context: 'default', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' } },
        auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 'right-one' } },
        aor: { alice: { max_contacts: '5' } },
      },
    },
  },
});
let logLines = 0;
const server = await startServer(config, { logDestination: new Writable({ write: (_c, _e, done) => { logLines += 1; done(); } }) });
const port = server.core.pjsip.port!;
const socket = dgram.createSocket('udp4');
await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
let waiter: ((text: string) => void) | undefined;
socket.on('message', (data) => {
  const text = data.toString('latin1');
  if (!/^SIP\/2\.0 1\d\d/.test(text)) waiter?.(text);
});

function register(authorization?: string): Promise<string> {
  const lines = [
    `REGISTER sip:127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${socket.address().port};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
    'Max-Forwards: 70',
    `From: <sip:alice@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`,
    'To: <sip:alice@127.0.0.1>',
    `Call-ID: ${randomBytes(8).toString('hex')}`,
    'CSeq: 1 REGISTER',
    `Contact: <sip:alice@127.0.0.1:${socket.address().port}>`,
    'Expires: 60',
    ...(authorization ? [`Authorization: ${authorization}`] : []),
    'Content-Length: 0',
    '',
    '',
  ];
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), 2000);
    waiter = (text) => {
      clearTimeout(timer);
      resolve(text);
    };
    socket.send(lines.join('\r\n'), port, '127.0.0.1');
  });
}

const status = (text: string): string => /^SIP\/2\.0 (\d{3})/.exec(text)?.[1] ?? text;
let nonce = '';
async function guess(password: string): Promise<string> {
  if (nonce === '') {
    const answer = await register();
    nonce = /nonce="([^"]+)"/.exec(answer)?.[1] ?? '';
    if (nonce === '') return status(answer);
  }
  const uri = `sip:127.0.0.1:${port}`;
  const cnonce = randomBytes(4).toString('hex');
  const response = digestResponse('MD5', digestHa1('MD5', 'alice', 'asterisk', password), { method: 'REGISTER', uri, nonce, qop: 'auth', nc: '00000001', cnonce });
  const answer = await register(`Digest username="alice", realm="asterisk", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="${cnonce}"`);
  if (status(answer) === '401') nonce = '';
  return status(answer);
}

const counts: Record<string, number> = {};
const started = performance.now();
let sent = 0;
while (performance.now() - started < seconds * 1000) {
  const answer = await guess(`wrong-${sent++}`);
  counts[answer] = (counts[answer] ?? 0) + 1;
}
const elapsed = (performance.now() - started) / 1000;
const right = await guess('right-one');
const metrics = await (await fetch(`${server.url}/metrics`)).text();
const checked = /^patchbay_sip_auth_failures_total (\S+)$/m.exec(metrics)?.[1];
process.stdout.write(
  `${sent} guesses in ${elapsed.toFixed(1)} s: ${(sent / elapsed).toFixed(0)} answers/s (${JSON.stringify(counts)}); ` +
    `checked: ${checked === undefined ? `all (${(sent / elapsed).toFixed(0)}/s)` : `${checked} (${(Number(checked) / elapsed).toFixed(1)}/s)`}; ` +
    `the right password afterwards: ${right}; log lines: ${logLines}\n`,
);
socket.close();
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
