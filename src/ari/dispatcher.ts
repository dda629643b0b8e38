// Transport-independent request handling: the same path serves HTTP and REST-over-WebSocket.
import { redactSecrets } from './read-only-views.ts';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import { toAriError } from './core-errors.ts';
import { AriError, Reply, type AnyHandler, type HandlerTable, type RequestContext } from './handler.ts';
import { checkValue } from './model-check.ts';
import { parseParams } from './params.ts';
import { Router, type RouteTarget } from './router.ts';
import type { ResourceDecl } from '../spec/types.ts';
import { SwaggerDocuments } from './swagger.ts';
import type { RequestForwarder } from './forwarding.ts';
import type { AriRequest, AriResponse } from './request-types.ts';
import { parseBoundedJson } from '../util/json-object.ts';

export type { AriRequest, AriResponse } from './request-types.ts';

export interface DispatcherOptions {
  readonly core: Core;
  readonly log: Logger;
  readonly resources: readonly ResourceDecl[];
  readonly handlers: ReadonlyMap<string, HandlerTable>;
  readonly developerMode: boolean;
  /** Maps a resource to the module that must be running for it to be served. */
  readonly moduleOf: (resource: string) => string;
}

const error = (status: number, message: string, headers: Record<string, string> = {}): AriResponse => ({
  status,
  headers,
  json: { message },
});

const NOT_FOUND = error(404, 'Resource not found');

/**
 * The headers of an answer that has none of its own, shared by all of them: an empty object per
 * answer was garbage on every request. Frozen, so that a change meant for one answer fails loudly.
 */
export const NO_HEADERS: Record<string, string> = Object.freeze({});

/** The parameters of an operation that declares none, shared by all (frozen, as NO_HEADERS). */
const NO_PARAMS: Record<string, unknown> = Object.freeze({});

/** Statuses every operation may answer without declaring them: success, and the server's own failures. */
export function isImplicitStatus(status: number): boolean {
  return (status >= 200 && status <= 299) || status === 500 || status === 501;
}

export class Dispatcher {
  readonly router = new Router();
  readonly swagger: SwaggerDocuments;
  private readonly options: DispatcherOptions;
  /**
   * What a route needs at every request, found once when it is added: its handler (a string-keyed
   * map probe and a megamorphic property load per request before) and the module it belongs to.
   * Keyed by the router's target object, the one route() answers with. The handler tables are
   * fixed when the dispatcher is made.
   */
  private readonly routes = new Map<RouteTarget, { readonly handler: AnyHandler | undefined; readonly module: string }>();
  /** A cluster member's forwarding (server.ts sets it when `cluster.nats_url` is configured). */
  forwarder: RequestForwarder | undefined;

  constructor(options: DispatcherOptions) {
    this.options = options;
    this.swagger = new SwaggerDocuments(options.resources);
    for (const resource of options.resources) {
      const module = options.moduleOf(resource.name);
      for (const operation of resource.operations) {
        const added = [this.router.add(resource, operation, operation.method, operation.path)];
        for (const alias of operation.aliases ?? []) added.push(this.router.add(resource, operation, alias.method, alias.path));
        for (const target of added) this.routes.set(target, { handler: this.handlerFor(target), module });
      }
    }
  }

  handlerFor(target: RouteTarget): AnyHandler | undefined {
    return this.options.handlers.get(target.resource.name)?.handlers[target.operation.nickname];
  }

  /** Answers synchronously when the handler does, so the common case costs no promise hops. */
  dispatch(request: AriRequest): AriResponse | Promise<AriResponse> {
    if (request.path.startsWith('/api-docs/')) return this.apiDocs(request);
    const routed = this.router.route(request.method, request.path);
    switch (routed.kind) {
      case 'not-found':
        return routed.trailingSlash ? error(404, 'Resource not found; remove the trailing slash from the path') : NOT_FOUND;
      case 'options':
        return { status: 204, headers: { Allow: routed.allow.join(',') } };
      case 'method-not-allowed':
        return error(405, 'Invalid method', { Allow: routed.allow.join(',') });
    }
    const { target, pathParams } = routed;
    if (request.meta) request.meta.operation = target.name;
    const { core, log } = this.options;
    const route = this.routes.get(target)!;
    if (!core.modules.isRunning(route.module)) return NOT_FOUND;
    if (target.operation.upgrade === 'websocket') return error(426, 'Upgrade to a WebSocket is required');
    if (this.forwarder !== undefined && request.forwarded !== true) {
      const remote = this.forwarder.forward(request, target, pathParams);
      if (remote !== undefined) return remote;
    }

    let json: unknown;
    let form: Map<string, string> | undefined;
    if (request.body && request.body.length > 0) {
      const type = (request.contentType ?? '').split(';')[0].trim().toLowerCase();
      if (type === 'application/json') {
        // Too deep a nesting is a parse error too, as jansson's depth limit makes it in Asterisk.
        const read = parseBoundedJson(request.body.toString('utf8'));
        if (read === undefined) return error(400, 'Error parsing request body');
        json = read.value;
      } else if (type === 'application/x-www-form-urlencoded') {
        form = new Map(new URLSearchParams(request.body.toString('utf8')));
      }
    }
    const handler = route.handler;
    let params: ReturnType<typeof parseParams>;
    try {
      // An operation without parameters (ping, list operations) has nothing to parse: no sources object is built.
      params = target.operation.params.length === 0 ? NO_PARAMS : parseParams(target.operation, { pathParams, query: request.query, form, json });
    } catch (thrown) {
      // The declarative parameter check: its 400s are implicit for every operation.
      return this.failure(target, thrown, false);
    }
    if (!handler) return error(501, `Not implemented: ${target.operation.nickname}`);
    try {
      const context: RequestContext = { core, user: request.user, log, origin: request.origin ?? '' };
      const result = handler(params, context);
      if (result instanceof Promise) {
        return result.then(
          (value) => this.forUser(request, this.success(target, value, request.transport)),
          (thrown: unknown) => this.failure(target, thrown),
        );
      }
      return this.forUser(request, this.success(target, result, request.transport));
    } catch (thrown) {
      return this.failure(target, thrown);
    }
  }

  /** A read-only user's answer shows no secret channel variable (read-only-views.ts). */
  private forUser(request: AriRequest, response: AriResponse): AriResponse {
    if (!request.user.readOnly || response.json === undefined) return response;
    return { ...response, json: redactSecrets(response.json) };
  }

  private failure(target: RouteTarget, thrown: unknown, checkDeclared = true): AriResponse {
    const ariError = thrown instanceof AriError ? thrown : toAriError(thrown);
    if (ariError) {
      if (checkDeclared) {
        const undeclared = this.undeclared(target, ariError.status);
        if (undeclared) return undeclared;
      }
      return error(ariError.status, ariError.message, ariError.headers);
    }
    this.options.log.error({ err: thrown, operation: target.operation.nickname }, 'handler failed');
    return error(500, 'Internal server error');
  }

  /**
   * Developer mode: a status the operation does not declare is a failure, as in Asterisk's generated
   * glue. Implicit for every operation (docs/errors.md): 2xx, 500, 501; the 400s of the
   * declarative parameter check and the statuses the router and transport answer before a handler
   * runs (404 route, 405, 406, 413, 426, 401/403 authentication) never reach this check.
   */
  private undeclared(target: RouteTarget, status: number): AriResponse | undefined {
    if (!this.options.developerMode || isImplicitStatus(status)) return undefined;
    const operation = target.operation;
    if (operation.errors.some((declared) => declared.code === status)) return undefined;
    this.options.log.error({ operation: operation.nickname, status }, 'handler answered a status its operation does not declare');
    return error(500, `${target.resource.name}.${operation.nickname} answered ${status}: undeclared status`);
  }

  private success(target: RouteTarget, result: unknown, transport: AriRequest['transport']): AriResponse {
    const reply = result instanceof Reply ? result : undefined;
    if (reply?.status !== undefined) {
      const undeclared = this.undeclared(target, reply.status);
      if (undeclared) return undeclared;
    }
    const body = reply ? reply.body : result;
    const binaryAnswer = target.operation.responseClass === 'binary';
    // Copied only when they will be added to (a binary answer's length) or are the handler's own.
    const headers: Record<string, string> = reply?.headers ? { ...reply.headers } : binaryAnswer ? {} : NO_HEADERS;
    const operation = target.operation;
    if (binaryAnswer) {
      if (transport === 'websocket') return error(406, 'Binary content cannot be sent over a WebSocket');
      const binary = body as { contentType: string; body: Buffer | NodeJS.ReadableStream; length?: number };
      if (binary.length !== undefined) headers['Content-Length'] = String(binary.length);
      return { status: reply?.status ?? 200, headers, raw: binary.body, contentType: binary.contentType };
    }
    if (operation.responseClass === 'void' || body === undefined) {
      return { status: reply?.status ?? operation.successStatus ?? 204, headers };
    }
    if (this.options.developerMode) {
      const problem = checkValue(operation.responseClass, body, operation.responseClass);
      if (problem) {
        this.options.log.error({ operation: operation.nickname, problem }, 'response does not match its model');
        return error(500, `Response does not match model: ${problem}`);
      }
    }
    return { status: reply?.status ?? operation.successStatus ?? 200, headers, json: body };
  }

  private apiDocs(request: AriRequest): AriResponse {
    const match = /^\/api-docs\/([A-Za-z]+)\.json$/.exec(request.path);
    if (!match) return NOT_FOUND;
    const document = this.swagger.render(match[1], request.origin === undefined ? undefined : `${request.origin}/ari`);
    if (!document) return NOT_FOUND;
    if (request.method === 'OPTIONS') return { status: 204, headers: { Allow: 'OPTIONS,GET' } };
    if (request.method !== 'GET') return error(405, 'Invalid method', { Allow: 'OPTIONS,GET' });
    return { status: 200, headers: {}, json: document };
  }
}
