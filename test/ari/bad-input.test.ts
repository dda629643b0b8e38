// Bad input never crashes the server or answers 500: every declared operation is called with
// hostile values in every parameter, and the server must answer each with a JSON error or success.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const HOSTILE = ['', ' ', '-1', '99999999999999999999', 'x'.repeat(300), '../../etc/passwd', '%00', '"quoted,"list', 'a,b,,c', '{}', 'null', 'Stasis:'];

test('every operation answers hostile parameters with a status below 500 (or 501 when unimplemented)', async () => {
  const problems: string[] = [];
  for (const resource of SERVED_RESOURCES) {
    for (const operation of resource.operations) {
      if (operation.upgrade) continue;
      for (const value of HOSTILE) {
        const path = operation.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(value || 'x'));
        const query = new URLSearchParams();
        const body: Record<string, unknown> = {};
        for (const param of operation.params) {
          if (param.in === 'query') query.set(param.name, value);
          else if (param.in === 'body') body[param.name] = param.dataType === 'object' ? { allowed: value } : { [value || 'k']: 42 };
        }
        const response = await server.ari(`${path}?${query}`, {
          method: operation.method,
          headers: { 'content-type': 'application/json' },
          body: operation.method === 'GET' ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        const label = `${operation.method} ${path} (${resource.name}.${operation.nickname}) value ${JSON.stringify(value)}`;
        if (response.status >= 500 && response.status !== 501) problems.push(`${label} → ${response.status} ${text}`);
        if (response.status >= 400 && !/^\{"message":/.test(text)) problems.push(`${label} → ${response.status} without an ARI error body: ${text.slice(0, 80)}`);
      }
    }
  }
  // Whatever was created along the way is cleaned up, and the server still answers.
  for (const channel of server.allChannels()) channel.hangup(16);
  for (const bridge of server.core.bridges.list()) bridge.destroy();
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
  assert.deepEqual(problems, []);
});

test('a JSON body nested deeper than 2048 levels is "Error parsing request body", as jansson refuses it in Asterisk', async () => {
  const post = async (body: string): Promise<[number, unknown]> => {
    const response = await server.ari('/asterisk/variable?variable=DEPTH', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return [response.status, await response.json()];
  };
  const nested = (depth: number): string => `{"value":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  // 2048 levels are parsed: the handler reads the body and refuses its value's type, not its JSON.
  const [atBound, atBoundBody] = await post(nested(2048));
  assert.notDeepEqual([atBound, atBoundBody], [400, { message: 'Error parsing request body' }]);
  assert.deepEqual(await post(nested(2049)), [400, { message: 'Error parsing request body' }]);
  // Close to the body limit in brackets alone: refused the same way, and the server goes on.
  assert.deepEqual(await post('['.repeat(500_000) + ']'.repeat(500_000)), [400, { message: 'Error parsing request body' }]);
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
});
