// Developer mode: checks a value against its declared type so that a drift between what the
// server sends and what the declarations promise fails loudly (and fails the tests).
import { ARI_DATE_PATTERN } from '../util/ari-date.ts';
import { MODELS } from '../spec/index.ts';
import type { ModelDecl } from '../spec/types.ts';

const models = MODELS as Readonly<Record<string, ModelDecl>>;

/** All properties of a model, including those it inherits. */
function propertiesOf(name: string): ModelDecl['properties'] {
  const model = models[name];
  if (!model.extends) return model.properties;
  return { ...propertiesOf(model.extends), ...model.properties };
}

const flattened = new Map<string, ModelDecl['properties']>();
function flatProperties(name: string): ModelDecl['properties'] {
  let props = flattened.get(name);
  if (!props) {
    props = propertiesOf(name);
    flattened.set(name, props);
  }
  return props;
}

/** Returns a description of the first mismatch, or undefined when the value conforms. */
export function checkValue(type: string, value: unknown, path: string): string | undefined {
  if (type === 'void') return value === undefined ? undefined : `${path}: expected no body`;
  if (type.startsWith('List[')) {
    if (!Array.isArray(value)) return `${path}: expected a list`;
    const itemType = type.slice(5, -1);
    for (let i = 0; i < value.length; i++) {
      const problem = checkValue(itemType, value[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  switch (type) {
    case 'string':
      return typeof value === 'string' ? undefined : `${path}: expected a string`;
    case 'Date':
      return typeof value === 'string' && ARI_DATE_PATTERN.test(value) ? undefined : `${path}: expected a date (YYYY-MM-DDTHH:MM:SS.mmm+ZZZZ)`;
    case 'int':
    case 'long':
      return Number.isInteger(value) ? undefined : `${path}: expected an integer`;
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : `${path}: expected a number`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `${path}: expected a boolean`;
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : `${path}: expected an object`;
  }
  if (!(type in models)) return `${path}: undeclared type ${type}`;
  return checkModel(type, value, path);
}

function checkModel(name: string, value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${path}: expected a ${name} object`;
  const record = value as Record<string, unknown>;
  const model = models[name];
  // A polymorphic model is checked as the concrete subtype its discriminator names.
  if (model.subTypes && typeof record.type === 'string' && record.type !== name && record.type in models) {
    return checkModel(record.type, value, path);
  }
  const properties = flatProperties(name);
  for (const [field, property] of Object.entries(properties)) {
    const fieldValue = record[field];
    if (fieldValue === undefined) {
      if (property.required) return `${path}.${field}: required field missing`;
      continue;
    }
    const problem = checkValue(property.type, fieldValue, `${path}.${field}`);
    if (problem) return problem;
    if (property.allowedValues && !property.allowedValues.includes(fieldValue as string)) {
      return `${path}.${field}: "${String(fieldValue)}" is not one of ${property.allowedValues.join(', ')}`;
    }
  }
  for (const field of Object.keys(record)) {
    if (!(field in properties) && record[field] !== undefined) return `${path}.${field}: field not declared in model ${name}`;
  }
  return undefined;
}
