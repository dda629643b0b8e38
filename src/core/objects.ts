// Looks up the objects event sources and user events name, by kind. Each subsystem that owns
// objects (channels, bridges, endpoints) registers its lookup when it starts.
export type ObjectKind = 'channel' | 'bridge' | 'endpoint';

/** Returns the object's ARI snapshot, or undefined when no such object exists. */
export type SnapshotLookup = (id: string) => Record<string, unknown> | undefined;

export class ObjectDirectory {
  private readonly lookups = new Map<ObjectKind, SnapshotLookup>();

  register(kind: ObjectKind, lookup: SnapshotLookup): void {
    this.lookups.set(kind, lookup);
  }

  snapshot(kind: ObjectKind, id: string): Record<string, unknown> | undefined {
    return this.lookups.get(kind)?.(id);
  }

  exists(kind: ObjectKind, id: string): boolean {
    return this.snapshot(kind, id) !== undefined;
  }
}
