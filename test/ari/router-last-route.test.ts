// The router remembers the last route it answered (a poller repeats one path): whatever the order of
// methods and paths, each request gets its own route, as without the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router, type RouteResult } from '../../src/ari/router.ts';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';

function router(): Router {
  const built = new Router();
  for (const resource of SERVED_RESOURCES) {
    for (const operation of resource.operations) {
      built.add(resource, operation, operation.method, operation.path);
      for (const alias of operation.aliases ?? []) built.add(resource, operation, alias.method, alias.path);
    }
  }
  return built;
}

const describe = (result: RouteResult): string => (result.kind === 'found' ? `${result.target.name} ${JSON.stringify(result.pathParams)}` : result.kind);

test('repeated, alternating and changing requests each get their own route', () => {
  const remembering = router();
  const requests: [string, string][] = [
    ['GET', '/asterisk/ping'],
    ['GET', '/asterisk/ping'],
    ['DELETE', '/asterisk/ping'],
    ['GET', '/asterisk/ping'],
    ['GET', '/channels/abc'],
    ['DELETE', '/channels/abc'],
    ['DELETE', '/channels/abd'],
    ['GET', '/channels/abd'],
    ['GET', '/channels/abd/'],
    ['OPTIONS', '/channels/abd'],
    ['GET', '/asterisk/ping'],
  ];
  for (const [method, path] of requests) {
    // A fresh router answers from its declarations alone: the reference for each request.
    assert.equal(describe(remembering.route(method, `${path}`)), describe(router().route(method, path)), `${method} ${path}`);
  }
  assert.equal(describe(remembering.route('DELETE', '/channels/abd')), 'channels.hangup {"channelId":"abd"}');
  assert.equal(remembering.route('DELETE', '/asterisk/ping').kind, 'method-not-allowed');
});
