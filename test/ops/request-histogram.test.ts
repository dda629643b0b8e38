// The request histogram counted in place says what prom-client's own histogram says for the same
// observations: the same exposition lines and the same JSON values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { RequestHistogram } from '../../src/ops/request-histogram.ts';

const NAME = 'patchbay_http_request_duration_seconds';
const HELP = 'ARI requests by operation and status';
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const OBSERVATIONS: [string, string, number, number][] = [
  ['asterisk.ping', 'GET', 200, 0.0001],
  ['asterisk.ping', 'GET', 200, 0.0005],
  ['asterisk.ping', 'GET', 200, 0.003],
  ['channels.originate', 'POST', 200, 0.02],
  ['channels.get', 'GET', 404, 0.0009],
  ['unrouted', 'GET', 401, 3.5],
  ['asterisk.ping', 'GET', 200, 2.5],
];

function both(): { ours: Registry; theirs: Registry; histogram: RequestHistogram } {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new RequestHistogram(NAME, HELP, BUCKETS, [ours]);
  const reference = new Histogram({ name: NAME, help: HELP, labelNames: ['operation', 'method', 'status'], buckets: BUCKETS, registers: [theirs] });
  for (const [operation, method, status, seconds] of OBSERVATIONS) {
    histogram.observeRequest(operation, method, status, seconds);
    reference.labels(operation, method, String(status)).observe(seconds);
  }
  return { ours, theirs, histogram };
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '').sort();

test('the exposition is the same lines as prom-client histogram', async () => {
  const { ours, theirs } = both();
  assert.deepEqual(lines(await ours.metrics()), lines(await theirs.metrics()));
});

test('the JSON values are the same as prom-client histogram', async () => {
  const { ours, theirs } = both();
  const key = (value: { metricName?: string; labels: object; value: number }): string => `${value.metricName} ${JSON.stringify(Object.entries(value.labels).sort())} ${value.value}`;
  const [mine] = await ours.getMetricsAsJSON();
  const [reference] = await theirs.getMetricsAsJSON();
  assert.deepEqual(mine!.values.map(key).sort(), reference!.values.map(key).sort());
  assert.equal(mine!.type, reference!.type);
});

test('reset forgets every series; a non-finite time is not counted', async () => {
  const { ours, histogram } = both();
  histogram.reset();
  histogram.observeRequest('asterisk.ping', 'GET', 200, Number.NaN);
  assert.doesNotMatch(await ours.metrics(), /_count/);
  histogram.observeRequest('asterisk.ping', 'GET', 200, 0.002);
  assert.match(await ours.metrics(), /_count\{operation="asterisk.ping",method="GET",status="200"\} 1/);
});
