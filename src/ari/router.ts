// Path routing derived from the declarations: a segment trie where literal segments win over
// `{param}` segments, as in Asterisk's router.
import type { HttpMethod, OperationDecl, ResourceDecl } from '../spec/types.ts';

export interface RouteTarget {
  readonly resource: ResourceDecl;
  readonly operation: OperationDecl;
  /** Names of the path parameters, in path order, as this route spells them. */
  readonly pathParamNames: readonly string[];
  /** `resource.nickname` (`asterisk.ping`), for request logs and metrics: made once, not per request. */
  readonly name: string;
}

interface RouteNode {
  readonly literals: Map<string, RouteNode>;
  param?: { readonly node: RouteNode };
  readonly methods: Map<HttpMethod, RouteTarget>;
}

const newNode = (): RouteNode => ({ literals: new Map(), methods: new Map() });

export type RouteResult =
  | { readonly kind: 'found'; readonly target: RouteTarget; readonly pathParams: Record<string, string> }
  | { readonly kind: 'method-not-allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'options'; readonly allow: readonly string[] }
  | { readonly kind: 'not-found'; readonly trailingSlash: boolean };

function splitPath(path: string): string[] {
  return path.split('/').filter((segment, index) => index > 0 || segment !== '');
}

/** Decodes one path segment the way Asterisk does: `%XX` escapes, and `+` as a space. */
function decodeSegment(segment: string): string | undefined {
  const spaced = segment.includes('+') ? segment.replaceAll('+', ' ') : segment;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}

/** Routes of recently seen paths; ARI clients hit the same few paths over and over. */
const ROUTE_CACHE_SIZE = 512;
/** HTTP methods given a cache (GET, POST, PUT, DELETE, OPTIONS and a few more). */
const MAX_CACHED_METHODS = 8;

export class Router {
  private readonly root = newNode();
  /**
   * Per method, then per path: keying on `${method} ${path}` built (and hashed) a new string for
   * every request. Bounded as a whole by ROUTE_CACHE_SIZE.
   */
  private readonly cache = new Map<string, Map<string, RouteResult>>();
  private cached = 0;
  /**
   * The last route answered, checked before the cache: a request's path is a new string, so a cache
   * probe hashed it every time, where comparing it with the last path is a length check and a memcmp
   * (a poller repeats one path). Paths are no secret, so the early-exit comparison gives nothing away.
   */
  private lastMethod = '';
  private lastPath = '';
  private lastResult: RouteResult | undefined;

  /** Adds a route; returns its target (the object route() answers with for it, every time). */
  add(resource: ResourceDecl, operation: OperationDecl, method: HttpMethod, path: string): RouteTarget {
    let node = this.root;
    const pathParamNames: string[] = [];
    for (const segment of splitPath(path)) {
      if (segment.startsWith('{') && segment.endsWith('}')) {
        pathParamNames.push(segment.slice(1, -1));
        node.param ??= { node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literals.get(segment);
        if (!next) {
          next = newNode();
          node.literals.set(segment, next);
        }
        node = next;
      }
    }
    if (node.methods.has(method)) throw new Error(`duplicate route ${method} ${path}`);
    const target: RouteTarget = { resource, operation, pathParamNames, name: `${resource.name}.${operation.nickname}` };
    node.methods.set(method, target);
    return target;
  }

  /** `path` is relative to /ari and still percent-encoded, e.g. `/channels/abc/play`. */
  route(method: string, path: string): RouteResult {
    if (this.lastResult !== undefined && this.lastPath === path && this.lastMethod === method) return this.lastResult;
    let byPath = this.cache.get(method);
    const cached = byPath?.get(path);
    if (cached) {
      // Three fields, not an object: a client alternating two paths would make one per request.
      this.lastMethod = method;
      this.lastPath = path;
      this.lastResult = cached;
      return cached;
    }
    const result = this.resolve(method, path);
    if (!byPath) {
      // Methods are whatever a client sends: only a known few get a cache of their own.
      if (this.cache.size >= MAX_CACHED_METHODS) return result;
      this.cache.set(method, (byPath = new Map()));
    }
    if (this.cached >= ROUTE_CACHE_SIZE) {
      // The oldest path of this method goes (or, when it has none, of the first method that has one).
      const victim = byPath.size > 0 ? byPath : [...this.cache.values()].find((paths) => paths.size > 0)!;
      victim.delete(victim.keys().next().value as string);
      this.cached--;
    }
    byPath.set(path, result);
    this.cached++;
    return result;
  }

  private resolve(method: string, path: string): RouteResult {
    const segments = path.split('/');
    segments.shift(); // the empty segment before the leading '/'
    const trailingSlash = segments.length > 0 && segments[segments.length - 1] === '';
    if (trailingSlash) return { kind: 'not-found', trailingSlash: this.find(segments.slice(0, -1)) !== undefined };
    const found = this.find(segments);
    if (!found) return { kind: 'not-found', trailingSlash: false };
    const { node, values } = found;
    const allow = ['OPTIONS', ...node.methods.keys()];
    if (method === 'OPTIONS') return { kind: 'options', allow };
    const target = node.methods.get(method as HttpMethod);
    if (!target) return { kind: 'method-not-allowed', allow };
    const pathParams: Record<string, string> = {};
    for (let i = 0; i < values.length; i++) pathParams[target.pathParamNames[i]] = values[i];
    return { kind: 'found', target, pathParams };
  }

  private find(segments: readonly string[]): { node: RouteNode; values: string[] } | undefined {
    const values: string[] = [];
    const walk = (node: RouteNode, index: number): RouteNode | undefined => {
      if (index === segments.length) return node.methods.size > 0 ? node : undefined;
      const decoded = decodeSegment(segments[index]);
      if (decoded === undefined || segments[index] === '') return undefined;
      const literal = node.literals.get(decoded);
      if (literal) {
        const hit = walk(literal, index + 1);
        if (hit) return hit;
      }
      if (node.param) {
        values.push(decoded);
        const hit = walk(node.param.node, index + 1);
        if (hit) return hit;
        values.pop();
      }
      return undefined;
    };
    const node = walk(this.root, 0);
    return node ? { node, values } : undefined;
  }
}
