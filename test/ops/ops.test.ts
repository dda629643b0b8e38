// GET /metrics and /health on a real server, and the debug request/dialplan log lines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parsePrometheus, sumOf } from '../helpers/prometheus.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

/** Polls until `check` holds, at most `timeoutMs`; the assertion after it says what was missing. */
async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !check(); ) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('ops routes', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  const metrics = async (): Promise<Map<string, number>> => {
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    return parsePrometheus(await response.text());
  };

  test('/health answers 200 with status ok and no secrets', async () => {
    const response = await fetch(`${server.url}/health`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.status, 'ok');
    assert.equal(typeof body.uptime_seconds, 'number');
    assert.doesNotMatch(JSON.stringify(body), /asterisk|password/);
  });

  test('/metrics parses as Prometheus text and its channel gauge follows originate and hang-up', async () => {
    const socket = await server.events('app=ops-test');
    const before = sumOf(await metrics(), 'patchbay_channels', 'technology="Local"');
    const created = await server.ari('/channels?endpoint=Local/answer@default&app=ops-test', { method: 'POST' });
    assert.equal(created.status, 200);
    const { id } = (await created.json()) as { id: string };
    await socket.nextOfType('StasisStart');
    const during = await metrics();
    assert.equal(sumOf(during, 'patchbay_channels', 'technology="Local"'), before + 2);
    assert.ok(sumOf(during, 'patchbay_http_request_duration_seconds_count', 'operation="channels.originate"') >= 1);
    // SIP figures are there (no registration, no SIP call in this test).
    assert.equal(sumOf(during, 'patchbay_sip_registrations'), 0);
    assert.equal(sumOf(during, 'patchbay_sip_calls'), 0);
    assert.ok(during.has('patchbay_sip_transactions{kind="server"}'), 'SIP transaction gauge');
    assert.ok(during.has('patchbay_bridges'));
    assert.equal(during.get('patchbay_websocket_clients'), 1);
    assert.ok(sumOf(during, 'patchbay_events_sent_total') >= 1);
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      if (sumOf(await metrics(), 'patchbay_channels', 'technology="Local"') === before) return void (await socket.close());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.fail('the channel gauge did not come back down after hang-up');
  });

  test('at debug, each ARI request is logged with method, path, status, time and user, never credentials', async () => {
    await fetch(`${server.url}/ari/asterisk/info?api_key=asterisk:asterisk`);
    const logged = (): string[] => server.logLines.filter((line) => line.includes('"ARI request"') && line.includes('/ari/asterisk/info'));
    await until(() => logged().length >= 1);
    const lines = logged();
    assert.ok(lines.length >= 1);
    const record = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    assert.equal(record.method, 'GET');
    assert.equal(record.status, 200);
    assert.equal(record.user, 'asterisk');
    assert.equal(typeof record.ms, 'number');
    for (const line of server.logLines) {
      assert.doesNotMatch(line, /api_key|asterisk:asterisk|Basic /);
    }
  });

  test('a dialplan step is logged as Asterisk does: Executing [exten@context:priority] App(args)', async () => {
    const created = await server.ari('/channels?endpoint=Local/answer@default&app=ops-test', { method: 'POST' });
    const { id } = (await created.json()) as { id: string };
    // The ;2 half runs the dialplan after the originate is answered: wait for its first step
    // (a fixed 100 ms was not always enough on a loaded machine), then hang up.
    const executing = (): boolean => server.logLines.some((line) => /Executing \[answer@default:1\] \w+\(/.test(line));
    await until(executing);
    await server.ari(`/channels/${id}`, { method: 'DELETE' });
    assert.ok(executing(), 'no Executing line');
  });

  test('one output: each record is written once', () => {
    const seen = new Set<string>();
    for (const line of server.logLines) {
      assert.ok(!seen.has(line), `logged twice: ${line}`);
      seen.add(line);
    }
  });
});

describe('/metrics with metrics.require_auth', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ metrics: { require_auth: true } });
  });
  after(async () => {
    await server.stop();
  });

  test('needs ARI credentials', async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: AUTH } })).status, 200);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });
});
