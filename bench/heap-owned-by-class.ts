// What each instance of a class holds on its own in a heap snapshot (issue 25, "Memory per call"):
// for the named constructors, the self size of the instance plus everything reachable from it
// through plain data — arrays, strings, numbers, plain Objects, Maps, Sets, Buffers and their
// backing stores — without entering another class's instance, a closure or code. Each node is
// counted once, for the first class that reaches it in the order given, so a SipRequest's header
// strings are the SipRequest's and not also the SipCall's. An estimate of the per-call part each
// class would free, not V8's dominator tree (heap-snapshot-diff.ts gives the self sizes).
// Usage: npx tsx bench/heap-owned-by-class.ts snap.heapsnapshot [--calls 200] [--classes SipRequest,SipResponse,…]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    calls: { type: 'string', default: '1' },
    classes: { type: 'string', default: 'SipRequest,SipResponse,ServerTransaction,ClientTransaction,Dialog,SipCall,Channel,ChannelView,CdrObject,KeptSnapshot,RemoteRtpStream,CallSession,SessionTimer,CallMedia,Timeout' },
  },
});
if (positionals.length !== 1) throw new Error('usage: heap-owned-by-class.ts snap.heapsnapshot [--calls N] [--classes A,B]');
const calls = Math.max(1, Number(values.calls) || 1);
const classes = values.classes.split(',').filter(Boolean);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const snap = JSON.parse(readFileSync(positionals[0], 'utf8')) as Snapshot;
const { node_fields: nodeFields, node_types: [nodeTypes], edge_fields: edgeFields, edge_types: [edgeTypes] } = snap.snapshot.meta;
const nodeWidth = nodeFields.length;
const edgeWidth = edgeFields.length;
const typeAt = nodeFields.indexOf('type');
const nameAt = nodeFields.indexOf('name');
const sizeAt = nodeFields.indexOf('self_size');
const edgeCountAt = nodeFields.indexOf('edge_count');
const edgeTypeAt = edgeFields.indexOf('type');
const edgeToAt = edgeFields.indexOf('to_node');
const nodeCount = snap.nodes.length / nodeWidth;
const firstEdge = new Uint32Array(nodeCount + 1);
for (let i = 0, e = 0; i < nodeCount; i++) {
  firstEdge[i] = e;
  e += snap.nodes[i * nodeWidth + edgeCountAt] * edgeWidth;
  firstEdge[i + 1] = e;
}
const typeOf = (n: number): string => nodeTypes[snap.nodes[n * nodeWidth + typeAt]];
const nameOf = (n: number): string => snap.strings[snap.nodes[n * nodeWidth + nameAt]];
const sizeOf = (n: number): number => snap.nodes[n * nodeWidth + sizeAt];

/** Plain data: what an instance owns when only it points there. */
const PLAIN_OBJECTS = new Set(['Object', 'Array', 'Map', 'Set', 'Buffer', 'Uint8Array', 'ArrayBuffer', 'system / JSArrayBufferData']);
const plain = (n: number): boolean => {
  const type = typeOf(n);
  if (type === 'array' || type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number' || type === 'hidden') return true;
  return (type === 'object' || type === 'native') && PLAIN_OBJECTS.has(nameOf(n));
};
const FOLLOWED = new Set(['property', 'element', 'internal', 'hidden']);

const claimed = new Uint8Array(nodeCount);
const rows: Array<{ name: string; count: number; bytes: number }> = [];
for (const cls of classes) {
  let count = 0;
  let bytes = 0;
  for (let n = 0; n < nodeCount; n++) {
    if (typeOf(n) !== 'object' || nameOf(n) !== cls || claimed[n]) continue;
    count++;
    claimed[n] = 1;
    bytes += sizeOf(n);
    const stack = [n];
    while (stack.length > 0) {
      const at = stack.pop()!;
      for (let e = firstEdge[at]; e < firstEdge[at + 1]; e += edgeWidth) {
        if (!FOLLOWED.has(edgeTypes[snap.edges[e + edgeTypeAt]])) continue;
        const to = snap.edges[e + edgeToAt] / nodeWidth;
        if (claimed[to] || !plain(to)) continue;
        claimed[to] = 1;
        bytes += sizeOf(to);
        stack.push(to);
      }
    }
  }
  rows.push({ name: cls, count, bytes });
}
console.log(`owned bytes by class (instance + its plain data), per call over ${calls} calls:`);
for (const row of rows) console.log(`  ${(row.bytes / calls).toFixed(0).padStart(8)} B ${(row.count / calls).toFixed(2).padStart(6)} ×  ${row.name}`);

// Then every plain node no listed class claimed, by the name of the nearest non-plain object that
// points at it (through plain nodes): who holds the rest of the (array) and (string) bytes.
const retainer = new Int32Array(nodeCount).fill(-1);
for (let n = 0; n < nodeCount; n++) {
  for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += edgeWidth) {
    if (!FOLLOWED.has(edgeTypes[snap.edges[e + edgeTypeAt]])) continue;
    const to = snap.edges[e + edgeToAt] / nodeWidth;
    if (retainer[to] < 0 || !plain(n)) retainer[to] = n;
  }
}
const owners = new Map<string, number>();
for (let n = 0; n < nodeCount; n++) {
  if (claimed[n] || !plain(n)) continue;
  let at = retainer[n];
  for (let hops = 0; at >= 0 && plain(at) && hops < 50; hops++) at = retainer[at];
  const owner = at < 0 ? '(none)' : `${typeOf(at)} ${nameOf(at).slice(0, 60)}`;
  owners.set(owner, (owners.get(owner) ?? 0) + sizeOf(n));
}
console.log('unclaimed plain data by nearest holder, per call:');
for (const [owner, bytes] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${(bytes / calls).toFixed(0).padStart(8)} B  ${owner}`);
