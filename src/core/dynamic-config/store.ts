// The dynamic configuration store: typed objects addressed by (configClass, objectType, id),
// read from and written to the backends their type lists, in the manner of Asterisk's sorcery.
// The objects written through it are a SharedStore: a cluster member shares each write with the
// others as the object's whole stored fields, so the newest write of an object is its value
// everywhere (docs/cluster.md).
import { ConflictError, ForbiddenError, InvalidError, NotFoundError } from '../errors.ts';
import { TypedEmitter } from '../../util/typed-emitter.ts';
import type { SharedStore, SharedWrite, SharedWriteListener } from '../shared-writes.ts';
import type {
  BackendName,
  ConfigBackend,
  ConfigChange,
  ConfigTuple,
  DynamicObject,
  ObjectTypeDefinition,
  StoredFields,
} from './types.ts';

type DynamicConfigEvents = { change: ConfigChange };

interface Located {
  readonly backend: ConfigBackend;
  readonly fields: StoredFields;
}

/** Longest configClass, objectType or id taken from another server's write. */
const MAX_SHARED_NAME_PART = 256;

/** The shared name of an object: its three parts as a JSON array (any of them may hold a `/`). */
export function sharedObjectName(configClass: string, objectType: string, id: string): string {
  return JSON.stringify([configClass, objectType, id]);
}

export class DynamicConfig extends TypedEmitter<DynamicConfigEvents> implements SharedStore {
  readonly #types = new Map<string, Map<string, ObjectTypeDefinition>>();
  readonly #backends = new Map<BackendName, ConfigBackend>();
  /** Told of every object created, changed or deleted through update()/delete() here; not of others' writes. */
  onWrite: SharedWriteListener | undefined;

  registerType(configClass: string, objectType: string, definition: ObjectTypeDefinition): void {
    let types = this.#types.get(configClass);
    if (!types) this.#types.set(configClass, (types = new Map()));
    if (types.has(objectType)) throw new ConflictError(`Object type '${configClass}/${objectType}' is already registered`);
    types.set(objectType, definition);
  }

  hasType(configClass: string, objectType: string): boolean {
    return this.#types.get(configClass)?.has(objectType) ?? false;
  }

  /** Makes a backend available to every type that lists it; replaces an earlier one of the same name. */
  attachBackend(backend: ConfigBackend): void {
    this.#backends.set(backend.name, backend);
  }

  /** Replaces a backend whose objects were read again, announcing each object that changed with it. */
  replaceBackend(backend: ConfigBackend, changes: readonly ConfigChange[]): void {
    this.attachBackend(backend);
    for (const change of changes) this.emit('change', change);
  }

  detachBackend(name: BackendName): void {
    this.#backends.delete(name);
  }

  /** All fields of the object, defaults filled in, in the type's field order. */
  get(configClass: string, objectType: string, id: string): ConfigTuple[] {
    const definition = this.#definition(configClass, objectType);
    const located = this.#locate(definition, configClass, objectType, id);
    if (!located) throw new NotFoundError(`Object with id '${id}' not found`);
    return tuplesOf(definition, located.fields);
  }

  /**
   * Creates the object when it does not exist (then `fields` may be omitted) or changes the given
   * fields of an existing one. Returns all its fields afterwards.
   */
  update(configClass: string, objectType: string, id: string, fields?: readonly ConfigTuple[]): ConfigTuple[] {
    const definition = this.#definition(configClass, objectType);
    const existing = this.#locate(definition, configClass, objectType, id);
    if (existing && fields === undefined) throw new InvalidError(`Fields must be provided to update object '${id}'`);

    const changes = validatedChanges(definition, fields ?? [], `${existing ? 'Update' : 'Creation'} of object '${id}'`);
    const target = existing ? existing.backend : this.#writableBackend(definition);
    if (!target?.writable) {
      throw new ForbiddenError(`Cannot ${existing ? 'update' : 'create'} sorcery objects of type '${objectType}'`);
    }
    const stored = { ...existing?.fields, ...changes };
    target.save(configClass, objectType, id, stored);
    this.emit('change', { configClass, objectType, id, action: existing ? 'updated' : 'created' });
    this.onWrite?.({ name: sharedObjectName(configClass, objectType, id), value: JSON.stringify(stored) });
    return tuplesOf(definition, stored);
  }

  delete(configClass: string, objectType: string, id: string): void {
    const definition = this.#definition(configClass, objectType);
    const located = this.#locate(definition, configClass, objectType, id);
    if (!located) throw new NotFoundError(`Object with id '${id}' not found`);
    if (!located.backend.writable) throw new ForbiddenError(`Could not delete object with id '${id}'`);
    located.backend.remove(configClass, objectType, id);
    this.emit('change', { configClass, objectType, id, action: 'deleted' });
    this.onWrite?.({ name: sharedObjectName(configClass, objectType, id), value: undefined });
  }

  /**
   * Another server's write: the object's whole stored fields (replacing these), or its removal.
   * Checked as an ARI write is (known type, known attributes, each field's own check); an object
   * living in a read-only backend here (this server's configuration file) is not changed.
   */
  applyShared(write: SharedWrite): void {
    const [configClass, objectType, id] = parseSharedObjectName(write.name);
    const definition = this.#definition(configClass, objectType);
    const existing = this.#locate(definition, configClass, objectType, id);
    if (write.value === undefined) {
      if (!existing) return;
      if (!existing.backend.writable) throw new ForbiddenError(`Could not delete object with id '${id}'`);
      existing.backend.remove(configClass, objectType, id);
      this.emit('change', { configClass, objectType, id, action: 'deleted' });
      return;
    }
    const stored = validatedChanges(definition, parseSharedFields(write.value), `Shared write of object '${id}'`);
    const target = existing ? existing.backend : this.#writableBackend(definition);
    if (!target?.writable) throw new ForbiddenError(`Cannot ${existing ? 'update' : 'create'} sorcery objects of type '${objectType}'`);
    target.save(configClass, objectType, id, stored);
    this.emit('change', { configClass, objectType, id, action: existing ? 'updated' : 'created' });
  }

  /** Every object of the type across its backends; an id found in several backends is taken from the first. */
  list(configClass: string, objectType: string): DynamicObject[] {
    const definition = this.#definition(configClass, objectType);
    const objects = new Map<string, DynamicObject>();
    for (const backend of this.#backendsOf(definition)) {
      for (const id of backend.ids(configClass, objectType)) {
        if (objects.has(id)) continue;
        const fields = backend.retrieve(configClass, objectType, id);
        if (fields) objects.set(id, { id, backend: backend.name, values: valuesOf(definition, fields) });
      }
    }
    return [...objects.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * Every object of the type with only the fields it sets (no defaults filled in), as the backends
   * keep them; an id found in several backends is taken from the first. Empty for an unknown type.
   */
  listStored(configClass: string, objectType: string): { readonly id: string; readonly fields: StoredFields }[] {
    const definition = this.#types.get(configClass)?.get(objectType);
    if (!definition) return [];
    const objects = new Map<string, StoredFields>();
    for (const backend of this.#backendsOf(definition)) {
      for (const id of backend.ids(configClass, objectType)) {
        if (objects.has(id)) continue;
        const fields = backend.retrieve(configClass, objectType, id);
        if (fields) objects.set(id, fields);
      }
    }
    return [...objects].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, fields]) => ({ id, fields }));
  }

  /** The object's values with defaults filled in, or undefined when it does not exist. */
  /** Whether an object exists; false (not NotFoundError) for an unknown class or type. */
  has(configClass: string, objectType: string, id: string): boolean {
    const definition = this.#types.get(configClass)?.get(objectType);
    return definition !== undefined && this.#locate(definition, configClass, objectType, id) !== undefined;
  }

  find(configClass: string, objectType: string, id: string): DynamicObject | undefined {
    const definition = this.#definition(configClass, objectType);
    const located = this.#locate(definition, configClass, objectType, id);
    return located && { id, backend: located.backend.name, values: valuesOf(definition, located.fields) };
  }

  #definition(configClass: string, objectType: string): ObjectTypeDefinition {
    const types = this.#types.get(configClass);
    if (!types) throw new NotFoundError(`configClass '${configClass}' not found`);
    const definition = types.get(objectType);
    if (!definition) throw new NotFoundError(`objectType '${objectType}' not found`);
    return definition;
  }

  #backendsOf(definition: ObjectTypeDefinition): ConfigBackend[] {
    return definition.backends.flatMap((name) => this.#backends.get(name) ?? []);
  }

  #locate(definition: ObjectTypeDefinition, configClass: string, objectType: string, id: string): Located | undefined {
    for (const backend of this.#backendsOf(definition)) {
      const fields = backend.retrieve(configClass, objectType, id);
      if (fields) return { backend, fields };
    }
    return undefined;
  }

  /** Where new objects go: the first listed backend that is not read-only (it may still refuse writes for now). */
  #writableBackend(definition: ObjectTypeDefinition): ConfigBackend | undefined {
    return this.#backendsOf(definition).find((backend) => !backend.readOnly);
  }
}

function parseSharedObjectName(name: string): [string, string, string] {
  let parts: unknown;
  try {
    parts = JSON.parse(name);
  } catch {
    throw new InvalidError('Malformed shared object name');
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((part) => typeof part === 'string' && part !== '' && part.length <= MAX_SHARED_NAME_PART)) {
    throw new InvalidError('Malformed shared object name');
  }
  return [parts[0] as string, parts[1] as string, parts[2] as string];
}

/** A shared object's fields: a JSON object of strings (its attributes are checked by the type after). */
function parseSharedFields(value: string): ConfigTuple[] {
  let fields: unknown;
  try {
    fields = JSON.parse(value);
  } catch {
    throw new InvalidError('Malformed shared object fields');
  }
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new InvalidError('Malformed shared object fields');
  return Object.entries(fields as Record<string, unknown>).map(([attribute, field]) => {
    if (typeof field !== 'string') throw new InvalidError(`Shared object field ${attribute.slice(0, 64)} is not a string`);
    return { attribute, value: field };
  });
}

function validatedChanges(definition: ObjectTypeDefinition, fields: readonly ConfigTuple[], what: string): StoredFields {
  const changes: StoredFields = {};
  for (const { attribute, value } of fields) {
    if (!Object.hasOwn(definition.fields, attribute)) {
      throw new InvalidError(`${what} failed field value validation: unknown attribute '${attribute}'`);
    }
    const problem = definition.fields[attribute].validate?.(value);
    if (problem !== undefined) throw new InvalidError(`${what} failed field value validation: ${attribute}: ${problem}`);
    changes[attribute] = value;
  }
  return changes;
}

function valuesOf(definition: ObjectTypeDefinition, stored: StoredFields): Record<string, string> {
  return Object.fromEntries(
    Object.entries(definition.fields).map(([name, spec]) => [name, Object.hasOwn(stored, name) ? stored[name] : spec.default]),
  );
}

function tuplesOf(definition: ObjectTypeDefinition, stored: StoredFields): ConfigTuple[] {
  return Object.entries(valuesOf(definition, stored)).map(([attribute, value]) => ({ attribute, value }));
}
