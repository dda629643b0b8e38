// The Stasis applications a forwarded ARI request names (`app=` of originate, create, snoop,
// external media; in the query or a JSON body, as ARI takes either), so that the member serving it
// can make sure it knows where each application is homed before the channel enters Stasis.
import type { ClusterAriRequest } from './wire.ts';

/** A body larger than this is not parsed for `app` (the dispatcher bounds and validates it). */
const MAX_BODY_PARSED = 64 * 1024;

export function applicationsNamed(request: ClusterAriRequest): string[] {
  // `application=` of a user event too.
  const names = [...request.query.getAll('app'), ...request.query.getAll('application')];
  // `/applications/{name}/…` (a subscription made through the home) names one too.
  const named = /^\/applications\/([^/]+)/.exec(request.path);
  if (named) {
    try {
      names.push(decodeURIComponent(named[1]!));
    } catch {
      // A malformed escape: the dispatcher answers 404 for it.
    }
  }
  const body = request.body;
  if (body !== undefined && body.length > 0 && body.length <= MAX_BODY_PARSED && (request.contentType ?? '').includes('json')) {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (parsed !== null && typeof parsed === 'object' && 'app' in parsed && typeof parsed.app === 'string') names.push(parsed.app);
    } catch {
      // Not JSON: the dispatcher answers 400 for it.
    }
  }
  // `app` may list several applications (subscriptions: `app=a,b`).
  return names.flatMap((name) => name.split(',')).map((name) => name.trim()).filter((name) => name !== '');
}
