// A V8 heap snapshot's nodes summed by constructor: the part bench/heap-snapshot-diff.ts and
// bench/worker-stream-memory.ts share.

/** The fields of a .heapsnapshot file these benches read. */
export interface Snapshot { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] }

/** Self size and count by constructor name (objects and native nodes), or by node type for the rest. */
export function sizesByName(snapshot: Snapshot): Map<string, { count: number; bytes: number }> {
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = snapshot.snapshot.meta.node_types[0];
  const sizes = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]];
    const name = type === 'object' || type === 'native' ? snapshot.strings[snapshot.nodes[i + nameAt]] : `(${type})`;
    const entry = sizes.get(name) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += snapshot.nodes[i + sizeAt];
    sizes.set(name, entry);
  }
  return sizes;
}
