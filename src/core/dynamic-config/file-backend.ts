// Objects defined in the configuration file. Read-only: the file is the operator's, never rewritten by the server.
import { ForbiddenError } from '../errors.ts';
import type { ConfigBackend, ConfigChange, StoredFields } from './types.ts';

/** configClass → objectType → id → field → value, as in the configuration file. */
export type ConfigObjectTree = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>>>>;

export class FileBackend implements ConfigBackend {
  readonly name = 'file' as const;
  readonly readOnly = true;
  readonly writable = false;

  constructor(private readonly tree: ConfigObjectTree) {}

  retrieve(configClass: string, objectType: string, id: string): StoredFields | undefined {
    const fields = this.#objectsOf(configClass, objectType)?.[id];
    return fields ? { ...fields } : undefined;
  }

  ids(configClass: string, objectType: string): string[] {
    return Object.keys(this.#objectsOf(configClass, objectType) ?? {}).sort();
  }

  save(): void {
    throw new ForbiddenError('The configuration file is read-only');
  }

  remove(): void {
    throw new ForbiddenError('The configuration file is read-only');
  }

  /** Every class/type the file uses, with the union of the field names its objects set. */
  objectTypes(): { configClass: string; objectType: string; fieldNames: string[] }[] {
    return Object.entries(this.tree).flatMap(([configClass, types]) =>
      Object.entries(types).map(([objectType, objects]) => ({
        configClass,
        objectType,
        fieldNames: [...new Set(Object.values(objects).flatMap((fields) => Object.keys(fields)))],
      })),
    );
  }

  #objectsOf(configClass: string, objectType: string) {
    return Object.hasOwn(this.tree, configClass) && Object.hasOwn(this.tree[configClass], objectType)
      ? this.tree[configClass][objectType]
      : undefined;
  }
}

/** The objects of both trees; an object (class, type, id) in both is taken whole from `over`. */
export function mergeConfigObjects(under: ConfigObjectTree, over: ConfigObjectTree): ConfigObjectTree {
  // Null prototypes: an id such as `__proto__` is a name like any other.
  const table = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
  const merged = table<Record<string, Record<string, Readonly<Record<string, string>>>>>();
  for (const tree of [under, over]) {
    for (const [configClass, types] of Object.entries(tree)) {
      const classOut = (merged[configClass] ??= table());
      for (const [objectType, objects] of Object.entries(types)) {
        const typeOut = (classOut[objectType] ??= table());
        for (const [id, fields] of Object.entries(objects)) typeOut[id] = fields;
      }
    }
  }
  return merged;
}

/** The objects created, updated (any field differs) or deleted from one tree to the next. */
export function diffConfigObjects(before: ConfigObjectTree, after: ConfigObjectTree): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const own = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined => (record && Object.hasOwn(record, key) ? record[key] : undefined);
  const classes = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const configClass of classes) {
    const typesBefore = own(before, configClass);
    const typesAfter = own(after, configClass);
    for (const objectType of new Set([...Object.keys(typesBefore ?? {}), ...Object.keys(typesAfter ?? {})])) {
      const objectsBefore = own(typesBefore, objectType);
      const objectsAfter = own(typesAfter, objectType);
      for (const id of new Set([...Object.keys(objectsBefore ?? {}), ...Object.keys(objectsAfter ?? {})])) {
        const was = own(objectsBefore, id);
        const is = own(objectsAfter, id);
        if (was === undefined && is !== undefined) changes.push({ configClass, objectType, id, action: 'created' });
        else if (was !== undefined && is === undefined) changes.push({ configClass, objectType, id, action: 'deleted' });
        else if (was !== undefined && is !== undefined && !sameFields(was, is)) changes.push({ configClass, objectType, id, action: 'updated' });
      }
    }
  }
  return changes;
}

function sameFields(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
