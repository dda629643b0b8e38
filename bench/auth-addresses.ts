// Crypt checks a guesser with many addresses gets (issue 21 item 10): for --seconds, 2,000
// distinct client addresses each send wrong crypt passwords (the per-address budget of 10 each
// never blocks them within the run); prints how many crypt checks the Authenticator started and
// finished per second, with --budget checks/s (0 = off, as before the server-wide budget).
// In-process and bounded: at most --seconds (≤ 20) and 256 checks pending at once.
// Usage: npx tsx bench/auth-addresses.ts [--seconds 3] [--budget 20]
import { parseArgs } from 'node:util';
import { encrypt } from 'unixcrypt';
import { Authenticator } from '../src/ari/auth.ts';
import type { AriUser } from '../src/config/config.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, budget: { type: 'string', default: '20' } } });
const seconds = Math.min(Math.max(Number(values.seconds) || 3, 1), 20);
const budget = Math.max(0, Number(values.budget) || 0);
const hash = encrypt('the right password', '$6$benchsaltbench'); // 5000 rounds, the default
const users: AriUser[] = [{ name: 'dashboard', password: hash, passwordFormat: 'crypt', readOnly: false, permit: [], deny: [], acl: [] }];
const authenticator = new Authenticator(users, { failedLogins: { maxPerAddress: 10, windowSeconds: 60, blockSeconds: 60, trackedAddresses: 10_000 }, cryptChecksPerSecond: budget });
const query = new URLSearchParams();
let started = 0;
let finished = 0;
let refused = 0;
let guess = 0;
const end = performance.now() + seconds * 1000;
while (performance.now() < end) {
  for (let i = 0; i < 50; i++) {
    const n = guess++;
    const address = `127.${(n >> 16) % 2000 === 0 ? 1 : 2}.${((n % 2000) >> 8) & 255}.${n % 2000 & 255}`;
    const answer = authenticator.authenticate({ authorization: `Basic ${Buffer.from(`dashboard:guess ${n}`).toString('base64')}` }, query, 'GET', address);
    if (answer instanceof Promise) {
      started++;
      void answer.then(() => finished++);
    } else refused++;
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await new Promise((resolve) => setTimeout(resolve, 500));
console.log(`budget ${budget || 'off'}: ${guess} guesses in ${seconds} s from 2,000 addresses → ${(started / seconds).toFixed(0)} crypt checks started/s, ${(finished / seconds).toFixed(0)} finished/s, ${refused} refused without a check`);
await authenticator.close();
