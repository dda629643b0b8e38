// Swagger 1.2 documents generated from the declarations (resources.json and one per resource).
import { MODELS } from '../spec/index.ts';
import type { ModelDecl, OperationDecl, ParamDecl, ResourceDecl } from '../spec/types.ts';

/** The ARI version this server implements (resources.json apiVersion); semantic versioning. */
export const ARI_API_VERSION = '12.0.0';
/** Asterisk keeps every per-resource document at this constant version. */
const DOCUMENT_API_VERSION = '2.0.0';

function allowableValues(values?: readonly string[], range?: ParamDecl['range']): Record<string, unknown> | undefined {
  if (values) return { valueType: 'LIST', values: [...values] };
  if (range) return { valueType: 'RANGE', ...(range.min !== undefined ? { min: range.min } : {}), ...(range.max !== undefined ? { max: range.max } : {}) };
  return undefined;
}

function parameterDoc(param: ParamDecl): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    name: param.name,
    description: param.description,
    paramType: param.in,
    required: param.required ?? false,
    allowMultiple: param.allowMultiple ?? false,
    dataType: param.dataType,
  };
  if (param.defaultValue !== undefined) doc.defaultValue = param.defaultValue;
  const allowable = allowableValues(param.allowedValues, param.range);
  if (allowable) doc.allowableValues = allowable;
  return doc;
}

function operationDoc(operation: OperationDecl): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    httpMethod: operation.method,
    method: operation.method,
    summary: operation.summary,
    nickname: operation.nickname,
    responseClass: operation.responseClass,
    type: operation.responseClass,
    parameters: operation.params.map(parameterDoc),
    errorResponses: operation.errors.map((error) => ({ code: error.code, reason: error.reason })),
  };
  if (operation.since) doc.since = [...operation.since];
  if (operation.notes) doc.notes = operation.notes;
  if (operation.upgrade) doc.upgrade = operation.upgrade;
  if (operation.websocketProtocol) doc.websocketProtocol = operation.websocketProtocol;
  return doc;
}

function modelDoc(id: string, model: ModelDecl): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(model.properties)) {
    const doc: Record<string, unknown> = { type: property.type, description: property.description };
    if (property.required) doc.required = true;
    const allowable = allowableValues(property.allowedValues);
    if (allowable) doc.allowableValues = allowable;
    properties[name] = doc;
  }
  const doc: Record<string, unknown> = { id, description: model.description, properties };
  if (model.extends) doc.extends = model.extends;
  if (model.discriminator) doc.discriminator = model.discriminator;
  if (model.subTypes) doc.subTypes = [...model.subTypes];
  return doc;
}

function apisOf(resource: ResourceDecl): Record<string, unknown>[] {
  const byPath = new Map<string, OperationDecl[]>();
  for (const operation of resource.operations) {
    const list = byPath.get(operation.path) ?? [];
    list.push(operation);
    byPath.set(operation.path, list);
  }
  return [...byPath].map(([path, operations]) => ({
    path,
    description: operations[0].summary,
    operations: operations.map(operationDoc),
  }));
}

/** Builds the documents once; only basePath depends on the request. */
export class SwaggerDocuments {
  private readonly listing: Record<string, unknown>;
  private readonly documents = new Map<string, Record<string, unknown>>();

  constructor(resources: readonly ResourceDecl[]) {
    const models = MODELS as Readonly<Record<string, ModelDecl>>;
    this.listing = {
      apiVersion: ARI_API_VERSION,
      swaggerVersion: '1.2',
      basePath: '',
      apis: resources.map((resource) => ({ path: `/api-docs/${resource.name}.{format}`, description: resource.description })),
    };
    for (const resource of resources) {
      const modelDocs: Record<string, unknown> = {};
      for (const name of resource.models) {
        const model = models[name];
        if (!model) throw new Error(`resource ${resource.name} names unknown model ${name}`);
        modelDocs[name] = modelDoc(name, model);
      }
      this.documents.set(resource.name, {
        apiVersion: DOCUMENT_API_VERSION,
        swaggerVersion: '1.2',
        basePath: '',
        resourcePath: `/api-docs/${resource.name}.{format}`,
        apis: apisOf(resource),
        models: modelDocs,
      });
    }
  }

  /** `name` is `resources` or a resource name; `basePath` is undefined when the request had no Host. */
  render(name: string, basePath: string | undefined): Record<string, unknown> | undefined {
    const document = name === 'resources' ? this.listing : this.documents.get(name);
    if (!document) return undefined;
    const copy = { ...document };
    if (basePath === undefined) delete copy.basePath;
    else copy.basePath = basePath;
    return copy;
  }
}
