// The shapes of the ARI declarations. Everything the interface layer does (routing, parameter
// validation, Swagger documents, developer-mode checks, handler typing) is derived from values
// of these types, so a resource is described exactly once.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type ParamDataType = 'string' | 'int' | 'long' | 'boolean' | 'containers' | 'object';

/** Where a parameter travels. `body` parameters are top-level JSON body values (`containers`/`object`). */
export type ParamLocation = 'path' | 'query' | 'body';

export interface ParamDecl {
  readonly name: string;
  readonly description: string;
  readonly in: ParamLocation;
  readonly dataType: ParamDataType;
  readonly required?: boolean;
  readonly allowMultiple?: boolean;
  /** Injected by the parser when the parameter is absent. */
  readonly defaultValue?: string | number | boolean;
  /** Allowed values (for allowMultiple parameters: allowed for each item). Matched case-sensitively unless `caseInsensitive`. */
  readonly allowedValues?: readonly string[];
  readonly caseInsensitive?: boolean;
  /** Inclusive numeric range for int/long parameters. */
  readonly range?: { readonly min?: number; readonly max?: number };
  /** Other wire names accepted for the same parameter (e.g. the spec's `max_silence_seconds`). Not shown in Swagger. */
  readonly aliases?: readonly string[];
}

export interface ErrorDecl {
  readonly code: number;
  readonly reason: string;
}

/** A second method/path that routes to the same operation (the spec's spelling of a real ARI path). Not shown in Swagger. */
export interface RouteAlias {
  readonly method: HttpMethod;
  readonly path: string;
}

export interface OperationDecl {
  readonly nickname: string;
  readonly method: HttpMethod;
  /** Relative to /ari, with `{name}` path parameters, e.g. `/channels/{channelId}/play`. */
  readonly path: string;
  readonly summary: string;
  readonly notes?: string;
  readonly since?: readonly string[];
  readonly params: readonly ParamDecl[];
  /** A model name, `List[Model]`, `void` or `binary`. */
  readonly responseClass: string;
  readonly errors: readonly ErrorDecl[];
  /** Status of a successful answer when it is not 200 (model) / 204 (void). */
  readonly successStatus?: number;
  readonly upgrade?: 'websocket';
  readonly websocketProtocol?: string;
  readonly aliases?: readonly RouteAlias[];
}

export interface ResourceDecl {
  /** The resource name as it appears in resources.json (`/api-docs/<name>.{format}`). */
  readonly name: string;
  readonly description: string;
  readonly operations: readonly OperationDecl[];
  /** Names of the models whose definitions this resource's document carries. */
  readonly models: readonly string[];
}

export interface PropertyDecl {
  /** string, int, long, double, boolean, object, Date, List[X] or a model name. */
  readonly type: string;
  readonly description: string;
  readonly required?: boolean;
  readonly allowedValues?: readonly string[];
}

export interface ModelDecl {
  readonly description: string;
  readonly properties: { readonly [name: string]: PropertyDecl };
  readonly extends?: string;
  readonly subTypes?: readonly string[];
  readonly discriminator?: string;
}

// ---- Type-level derivation -------------------------------------------------------------------

type PrimitiveOf<T extends string> = T extends 'string' | 'Date'
  ? string
  : T extends 'int' | 'long' | 'double'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'object'
        ? object
        : unknown;

/** The TypeScript type of a model field whose declared type is T, in the model registry M. */
export type FieldType<T extends string, M> = T extends `List[${infer Item}]`
  ? FieldType<Item, M>[]
  : T extends keyof M
    ? ModelType<M, T>
    : PrimitiveOf<T>;

type PropValue<P, M> = P extends { readonly allowedValues: readonly (infer V)[] }
  ? V
  : P extends { readonly type: infer T extends string }
    ? FieldType<T, M>
    : never;

type RequiredKeys<Props> = { [K in keyof Props]: Props[K] extends { readonly required: true } ? K : never }[keyof Props];
type OptionalKeys<Props> = Exclude<keyof Props, RequiredKeys<Props>>;

type Flatten<T> = { [K in keyof T]: T[K] };

type OwnFields<Props, M> = { -readonly [K in RequiredKeys<Props>]: PropValue<Props[K], M> } & {
  -readonly [K in OptionalKeys<Props>]?: PropValue<Props[K], M>;
};

/** The TypeScript type of model N of registry M, including the fields of the models it extends. */
export type ModelType<M, N extends keyof M> = M[N] extends { readonly properties: infer Props }
  ? Flatten<
      OwnFields<Props, M> &
        (M[N] extends { readonly extends: infer Parent extends keyof M } ? ModelType<M, Parent> : unknown)
    >
  : never;

type ParamScalar<P> = P extends { readonly allowedValues: readonly (infer V)[] }
  ? V
  : P extends { readonly dataType: 'int' | 'long' }
    ? number
    : P extends { readonly dataType: 'boolean' }
      ? boolean
      : P extends { readonly dataType: 'containers' | 'object' }
        ? Record<string, unknown>
        : string;

type ParamValue<P> = P extends { readonly allowMultiple: true } ? ParamScalar<P>[] : ParamScalar<P>;

type ParamsArray<O> = O extends { readonly params: readonly (infer P)[] } ? P : never;
type ParamPresent<P> = P extends { readonly required: true } | { readonly defaultValue: unknown } | { readonly in: 'path' } ? true : false;

/** The parsed, validated parameters of an operation. Parameters that are required or defaulted are always present. */
export type ParamsOf<O> = Flatten<
  { -readonly [P in ParamsArray<O> as ParamPresent<P> extends true ? P['name' & keyof P] & string : never]: ParamValue<P> } & {
    -readonly [P in ParamsArray<O> as ParamPresent<P> extends true ? never : P['name' & keyof P] & string]?: ParamValue<P>;
  }
>;

/** The TypeScript type of an operation's successful result, given the model registry M. */
export type ResultOf<O, M> = O extends { readonly responseClass: infer R extends string }
  ? R extends 'void'
    ? void
    : R extends 'binary'
      ? BinaryResult
      : FieldType<R, M>
  : never;

export interface BinaryResult {
  readonly contentType: string;
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly length?: number;
}
