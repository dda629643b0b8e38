// The cost of joining a conference: CPU per ARI-style addChannel into one mixing bridge of N
// members, and per member as the bridge is deleted, in process on the real core. Each join
// reconfigures the members' BRIDGEPEER as Asterisk does (one ChannelVarset per member per join, a
// list bounded to 10 names: src/core/bridges/bridge-peers.ts), so the work of the k-th join grows
// with k; this bench shows by how much. The events go to a subscribe-all application that
// serialises each one (as its WebSocket would), so the fan-out is counted.
// Usage: node --expose-gc --import tsx bench/bridge-join.ts [--sizes 10,100,500] [--rounds 3]
// (rounds vary a lot on a loaded machine: compare the least of several, alternating with a baseline build).
import { parseArgs } from 'node:util';
import type { Channel } from '../src/core/channels/channel.ts';
import { startInProcessCore } from './in-process-core.ts';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '10,100,500' }, rounds: { type: 'string', default: '3' } } });
const SIZES = values.sizes.split(',').map((entry) => Math.min(Math.max(Math.floor(Number(entry)) || 0, 2), 2000));
const ROUNDS = Math.min(Math.max(Math.floor(Number(values.rounds)) || 3, 1), 10);
const APP = 'bench';

let bytes = 0;
const { core, call, stop } = await startInProcessCore('bridge-join', APP, { deliver: (_app, event, json) => void (bytes += (json ?? JSON.stringify(event)).length) }, true);

const cpuUs = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

for (const size of SIZES) {
  for (let round = 0; round < ROUNDS; round++) {
    const channels: Channel[] = [];
    for (let made = 0; made < size; made += 50) channels.push(...(await Promise.all(Array.from({ length: Math.min(50, size - made) }, () => call()))));
    const bridge = core.bridges.create({ types: ['mixing'] });
    bytes = 0;
    // A collection now rather than in the middle of the joins (run with --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    const joinStart = cpuUs();
    for (const channel of channels) core.bridges.addChannel(bridge, channel, {});
    const joinUs = cpuUs() - joinStart;
    const joinBytes = bytes;
    const endStart = cpuUs();
    bridge.end();
    const endUs = cpuUs() - endStart;
    console.log(JSON.stringify({ size, round, joinUsPerMember: +(joinUs / size).toFixed(1), deleteUsPerMember: +(endUs / size).toFixed(1), eventKBPerJoin: +(joinBytes / size / 1024).toFixed(2) }));
    for (const channel of channels) channel.hangup();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
await stop();
process.exit(0);
