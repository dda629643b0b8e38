// Objects defined in the configuration file. Read-only: the file is the operator's, never rewritten by the server.
import { ForbiddenError } from '../errors.ts';
import type { ConfigBackend, StoredFields } from './types.ts';

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
