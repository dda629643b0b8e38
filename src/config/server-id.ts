// The server's id (Asterisk's `entity_id`) when the settings do not give one: the id stored in the
// data directory by an earlier start, else the MAC of a network interface, else a random
// locally administered one, stored so that it stays the same across restarts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ReadContext } from './schema.ts';

/** What a server id looks like: a MAC address, xx:xx:xx:xx:xx:xx. */
export const SERVER_ID_RE = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i;
const SERVER_ID_FILE = 'server-id';

export function defaultServerId(dataDir: string, ctx: ReadContext): string {
  const p = ['server_id'];
  const file = path.join(dataDir, SERVER_ID_FILE);
  // An id stored earlier wins, so the id stays stable even if interfaces come and go.
  let stored: string | undefined;
  try {
    stored = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      ctx.fail(p, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }
  if (stored !== undefined) {
    if (SERVER_ID_RE.test(stored)) return stored.toLowerCase();
    ctx.fail(p, `${file} does not hold a valid id (xx:xx:xx:xx:xx:xx); fix or delete it`);
  }
  for (const infos of Object.values(ctx.networkInterfaces())) {
    for (const info of infos ?? []) {
      if (!info.internal && SERVER_ID_RE.test(info.mac) && info.mac !== '00:00:00:00:00:00') return info.mac.toLowerCase();
    }
  }
  const bytes = crypto.randomBytes(6);
  bytes[0] = (bytes[0]! | 0x02) & 0xfe; // locally administered, unicast
  const id = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, id + '\n', { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return defaultServerId(dataDir, { ...ctx, fail: ctx.fail, networkInterfaces: () => ({}) });
    ctx.fail(p, `no network interface MAC found and cannot store a generated id in ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}; set server_id`);
  }
  return id;
}
