// Looks up the objects event sources and user events name, by kind. Each subsystem that owns
// objects (channels, bridges, endpoints) registers its lookup when it starts.
import type { Model } from '../spec/index.ts';

/** The ARI snapshot of each kind of object, as declared. */
export interface ObjectSnapshots {
  channel: Model<'Channel'>;
  bridge: Model<'Bridge'>;
  endpoint: Model<'Endpoint'>;
}

export type ObjectKind = keyof ObjectSnapshots;

/** Returns the object's ARI snapshot, or undefined when no such object exists. */
export type SnapshotLookup<K extends ObjectKind = ObjectKind> = (id: string) => ObjectSnapshots[K] | undefined;

export class ObjectDirectory {
  private readonly lookups: { [K in ObjectKind]?: SnapshotLookup<K> } = {};

  register<K extends ObjectKind>(kind: K, lookup: SnapshotLookup<K>): void {
    (this.lookups as Record<K, SnapshotLookup<K>>)[kind] = lookup;
  }

  snapshot<K extends ObjectKind>(kind: K, id: string): ObjectSnapshots[K] | undefined {
    return (this.lookups[kind] as SnapshotLookup<K> | undefined)?.(id);
  }

  exists(kind: ObjectKind, id: string): boolean {
    return this.snapshot(kind, id) !== undefined;
  }
}
