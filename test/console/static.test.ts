// The console's static files: only the three known files, with their types and the security
// headers, under the http.prefix too; no path reaches anything else; switched off by http.console.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_CSP, ConsoleFiles } from '../../src/console/static.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('web console files', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('the page, its script and its style are served without credentials, with their types and security headers', async () => {
    const expected: [string, string, string][] = [
      ['/console', 'text/html; charset=utf-8', '<script type="module" src="console/console.js">'],
      ['/console/console.js', 'text/javascript; charset=utf-8', 'api_key'],
      ['/console/console.css', 'text/css; charset=utf-8', 'meter'],
    ];
    for (const [path, type, content] of expected) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), type, path);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('content-security-policy'), CONSOLE_CSP);
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      const body = await response.text();
      assert.ok(body.includes(content), `${path} holds ${content}`);
      assert.equal(Number(response.headers.get('content-length')), Buffer.byteLength(body));
    }
    assert.match(CONSOLE_CSP, /default-src 'none'/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
  });

  test('the page holds no credentials', async () => {
    for (const path of ['/console', '/console/console.js']) {
      const body = await (await fetch(`${server.url}${path}`)).text();
      assert.doesNotMatch(body, /asterisk:asterisk|password\s*[:=]\s*['"][^'"]+['"]/i, path);
    }
  });

  test('no other path is served: unknown names, traversal, encoded traversal, the source directory', async () => {
    for (const path of [
      '/console/index.html',
      '/console/../package.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/..%2fstatic.ts',
      '/console/static.ts',
      '/console/public/console.js',
      '/console/console.js/',
      '/console//console.js',
      '/consolex',
    ]) {
      const statusLine = await rawRequest(server.url, [`GET ${path} HTTP/1.1`, 'Host: x', 'Connection: close']);
      assert.match(statusLine, /^HTTP\/1\.1 404 /, path);
    }
  });

  test('/console/ redirects to /console (relative, so a prefix is kept); writes are refused; HEAD has no body', async () => {
    const redirect = await fetch(`${server.url}/console/`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '../console');
    const post = await fetch(`${server.url}/console`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET,HEAD');
    const head = await fetch(`${server.url}/console/console.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.ok(Number(head.headers.get('content-length')) > 1000);
    assert.equal(await head.text(), '');
  });

  test('under http.prefix the console is at /<prefix>/console; http.console: false turns it off', async () => {
    const prefixed = await startTestServer({ http: { prefix: 'asterisk' } });
    const off = await startTestServer({ http: { console: false } });
    try {
      assert.equal((await fetch(`${prefixed.url}/asterisk/console`)).status, 200);
      assert.equal((await fetch(`${prefixed.url}/console`)).status, 404);
      const answer = await fetch(`${off.url}/console`);
      assert.equal(answer.status, 404);
      assert.deepEqual(await answer.json(), { message: 'Resource not found' });
    } finally {
      await prefixed.stop();
      await off.stop();
    }
  });
});

test('missing console files (a build that skipped copying them) leave the server running without /console', () => {
  const warnings: string[] = [];
  const files = ConsoleFiles.load({ warn: (_details, message) => warnings.push(message) }, new URL('file:///nonexistent-patchbay-console/'));
  assert.equal(files, undefined);
  assert.match(warnings[0], /web console files not found/);
  assert.ok(ConsoleFiles.load({ warn: () => assert.fail('the real files exist') }) instanceof ConsoleFiles);
});
