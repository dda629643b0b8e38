// Shared shapes of the dynamic configuration store (Asterisk's sorcery, as seen through ARI).

/** One field of an object and its present value. */
export interface ConfigTuple {
  attribute: string;
  value: string;
}

export interface FieldSpec {
  readonly default: string;
  /** Returns an error message when `value` is not acceptable. */
  validate?(value: string): string | undefined;
}

export type BackendName = 'file' | 'sqlite';

export interface ObjectTypeDefinition {
  /** The object's fields in the order they are reported. */
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Where objects of the type live, searched in this order; new objects go to the first writable one. */
  readonly backends: readonly BackendName[];
}

/** A type a higher floor (a channel technology) declares, registered before the file's objects load. */
export interface ConfigTypeRegistration {
  readonly configClass: string;
  readonly objectType: string;
  readonly definition: ObjectTypeDefinition;
}

/** Field values as a backend keeps them: only those explicitly set, defaults are filled in by the store. */
export type StoredFields = Record<string, string>;

export interface ConfigBackend {
  readonly name: BackendName;
  /** A read-only backend never takes writes; objects living there cannot be changed through the store. */
  readonly readOnly: boolean;
  /** Whether the backend accepts writes right now (a read-write backend may be switched off). */
  readonly writable: boolean;
  retrieve(configClass: string, objectType: string, id: string): StoredFields | undefined;
  /** Ids of the objects of a type, sorted. */
  ids(configClass: string, objectType: string): string[];
  /** Creates or replaces an object; only called when `writable`. */
  save(configClass: string, objectType: string, id: string, fields: StoredFields): void;
  /** Only called when `writable`. */
  remove(configClass: string, objectType: string, id: string): void;
}

/** A stored object with its defaults filled in. */
export interface DynamicObject {
  readonly id: string;
  readonly backend: BackendName;
  readonly values: Readonly<Record<string, string>>;
}

export interface ConfigChange {
  readonly configClass: string;
  readonly objectType: string;
  readonly id: string;
  readonly action: 'created' | 'updated' | 'deleted';
}
