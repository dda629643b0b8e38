// The contract between the generic interface layer and the per-resource handler files.
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import type { AriUser } from '../config/config.ts';
import { DECLARED_RESOURCES, type Models, type ResourceName } from '../spec/index.ts';
import type { ParamsOf, ResultOf } from '../spec/types.ts';

/** Thrown by handlers (and the core) to answer with an ARI error body `{"message": ...}`. */
export class AriError extends Error {
  readonly status: number;
  readonly headers?: Record<string, string>;
  constructor(status: number, message: string, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

export interface RequestContext {
  readonly core: Core;
  readonly user: AriUser;
  readonly log: Logger;
  /** `http://host[:port]` as the client addressed the server; used for Location headers and Swagger basePath. */
  readonly origin: string;
}

/** A successful answer with a non-default status or extra headers. */
export class Reply<T> {
  constructor(
    readonly body: T,
    readonly status?: number,
    readonly headers?: Record<string, string>,
  ) {}
}

type Operations<R extends ResourceName> = (typeof DECLARED_RESOURCES)[R]['operations'][number];
export type OperationOf<R extends ResourceName, N extends string> = Extract<Operations<R>, { readonly nickname: N }>;
export type NicknameOf<R extends ResourceName> = Operations<R>['nickname'];

export type Handler<O> = (
  params: ParamsOf<O>,
  ctx: RequestContext,
) => ResultOf<O, Models> | Reply<ResultOf<O, Models>> | Promise<ResultOf<O, Models> | Reply<ResultOf<O, Models>>>;

export type HandlersOf<R extends ResourceName> = {
  [N in NicknameOf<R>]?: Handler<OperationOf<R, N>>;
};

/** Untyped view used by the dispatcher. */
export type AnyHandler = (params: Record<string, unknown>, ctx: RequestContext) => unknown;

export interface HandlerTable {
  readonly resource: ResourceName;
  readonly handlers: Readonly<Record<string, AnyHandler>>;
}

/** Binds handler functions to the operations of one declared resource, typed from the declarations. */
export function defineHandlers<R extends ResourceName>(resource: R, handlers: HandlersOf<R>): HandlerTable {
  return { resource, handlers: handlers as unknown as Record<string, AnyHandler> };
}
