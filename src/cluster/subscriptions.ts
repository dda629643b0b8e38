// Subscriptions of an application to other members' objects. `POST/DELETE
// /applications/{app}/subscription?eventSource=channel:X` reaches the application's home, which
// does not hold X when X lives on another member: there the application is a relay (app-events.ts),
// so the subscription is made on the relay of X's owner, whose events then flow to the home through
// the stream as any relayed event. The sources held here (or held by nobody, which answer 422
// here as on a single server) are served here; the answer is the home's application with the ids
// the owners subscribed added, as a single server would list them.
import type { ClusterAriRequest, ClusterAriResponse, OwnedResource } from './wire.ts';

/** Sources one request may name (the dispatcher bounds the query; this bounds the hops). */
const MAX_SOURCES = 64;

export interface SubscriptionRouting {
  /** Whether this member holds the channel or bridge. */
  holds(kind: 'channel' | 'bridge', id: string): boolean;
  /** The owner's answer to the request, or undefined when nobody holds the resource. */
  askOwner(request: ClusterAriRequest, owned: OwnedResource): Promise<ClusterAriResponse | undefined>;
  /** Served by this member's own dispatch. */
  local(request: ClusterAriRequest): Promise<ClusterAriResponse>;
  /** The request sent to every other live member (their answers are not needed). */
  tellOthers(request: ClusterAriRequest): Promise<void>;
}

/** `channel:` / `bridge:` with no id: every object of the kind, on every member. */
function isWholeKind(source: string): boolean {
  return source === 'channel:' || source === 'bridge:';
}

/** The event sources of the request, as ARI takes them: repeated and/or comma-separated. */
function sourcesOf(query: URLSearchParams): string[] {
  return query
    .getAll('eventSource')
    .flatMap((value) => value.split(','))
    .map((source) => source.trim())
    .filter((source) => source !== '');
}

/** The channel or bridge a source names (`channel:<id>`, `bridge:<id>`; not the `channel:` of all). */
function remoteCandidate(source: string): OwnedResource | undefined {
  const colon = source.indexOf(':');
  if (colon < 0) return undefined;
  const kind = source.slice(0, colon);
  const id = source.slice(colon + 1);
  if (id === '' || (kind !== 'channel' && kind !== 'bridge')) return undefined;
  return { kind, id };
}

function withSources(request: ClusterAriRequest, sources: readonly string[]): ClusterAriRequest {
  const query = new URLSearchParams(request.query);
  query.delete('eventSource');
  for (const source of sources) query.append('eventSource', source);
  return { ...request, query };
}

const ID_LISTS = ['channel_ids', 'bridge_ids', 'endpoint_ids', 'device_names'] as const;

/** The home's application with the ids the owners' answers list for it. */
export function mergeApplications(home: ClusterAriResponse, remote: readonly ClusterAriResponse[]): ClusterAriResponse {
  if (home.status !== 200 || home.json === null || typeof home.json !== 'object') return home;
  const merged: Record<string, unknown> = { ...(home.json as Record<string, unknown>) };
  for (const list of ID_LISTS) {
    const ids = new Set<unknown>(Array.isArray(merged[list]) ? (merged[list] as unknown[]) : []);
    for (const answer of remote) {
      const json = answer.json as Record<string, unknown> | undefined;
      const theirs = json?.[list];
      // The owner's relay lists only what it holds: its channels and bridges, never the home's endpoints.
      if ((list === 'channel_ids' || list === 'bridge_ids') && Array.isArray(theirs)) for (const id of theirs) if (typeof id === 'string') ids.add(id);
    }
    merged[list] = [...ids];
  }
  return { ...home, json: merged };
}

/**
 * Splits a (un)subscription between this member and the owners of the sources it names; undefined
 * when every source is served here (the request then goes on unchanged).
 */
export function routeSubscription(request: ClusterAriRequest, routing: SubscriptionRouting): Promise<ClusterAriResponse> | undefined {
  const sources = sourcesOf(request.query).slice(0, MAX_SOURCES);
  const elsewhere = sources.filter((source) => {
    const owned = remoteCandidate(source);
    return owned !== undefined && !routing.holds(owned.kind as 'channel' | 'bridge', owned.id);
  });
  const whole = sources.filter(isWholeKind);
  if (elsewhere.length === 0 && whole.length === 0) return undefined;
  return (async () => {
    const here: string[] = sources.filter((source) => !elsewhere.includes(source));
    const remote: ClusterAriResponse[] = [];
    for (const source of elsewhere) {
      const answer = await routing.askOwner(withSources(request, [source]), remoteCandidate(source)!);
      // Nobody holds it: this member answers for it (422 "does not exist", as a single server).
      if (answer === undefined) {
        here.push(source);
        continue;
      }
      if (answer.status !== 200) return answer;
      remote.push(answer);
    }
    const home = here.length > 0
      ? await routing.local(withSources(request, here))
      : await routing.local({ ...request, method: 'GET', query: new URLSearchParams(), body: undefined, path: request.path.replace(/\/subscription$/, '') });
    // Every channel or bridge: the relays on the other members are (un)subscribed too, once the
    // home accepted it (its rights checks and 400s are the answer).
    if (whole.length > 0 && home.status === 200) await routing.tellOthers(withSources(request, whole));
    return mergeApplications(home, remote);
  })();
}

/**
 * `GET /applications`: this member's list (the applications connected here and the relays of those
 * homed elsewhere, as before), each with the channels and bridges the other members hold for it added.
 */
export function mergeApplicationLists(own: ClusterAriResponse, remote: ReadonlyArray<ClusterAriResponse | undefined>): ClusterAriResponse {
  if (own.status !== 200 || !Array.isArray(own.json)) return own;
  const byName = new Map<string, { first: ClusterAriResponse; others: ClusterAriResponse[] }>();
  for (const answer of [own, ...remote]) {
    if (!answer || answer.status !== 200 || !Array.isArray(answer.json)) continue;
    for (const item of answer.json as unknown[]) {
      if (item === null || typeof item !== 'object' || typeof (item as Record<string, unknown>).name !== 'string') continue;
      const name = (item as Record<string, unknown>).name as string;
      const one: ClusterAriResponse = { status: 200, headers: {}, json: item };
      const known = byName.get(name);
      if (known) known.others.push(one);
      else if (answer === own) byName.set(name, { first: one, others: [] });
    }
  }
  return { ...own, json: [...byName.values()].map(({ first, others }) => mergeApplications(first, others).json) };
}

/**
 * `POST /events/user/{name}?source=channel:X`: a user event about another member's channel or
 * bridge is raised by its owner (its relay of the application sends it to the home); undefined
 * when every source is held here or by nobody (served here: 422 for an unknown one).
 */
export function routeUserEvent(request: ClusterAriRequest, routing: SubscriptionRouting): Promise<ClusterAriResponse> | undefined {
  const remote = request.query
    .getAll('source')
    .flatMap((value) => value.split(','))
    .slice(0, MAX_SOURCES)
    .map((source) => remoteCandidate(source.trim()))
    .find((owned) => owned !== undefined && !routing.holds(owned.kind as 'channel' | 'bridge', owned.id));
  if (remote === undefined) return undefined;
  return routing.askOwner(request, remote).then((answer) => answer ?? routing.local(request));
}
