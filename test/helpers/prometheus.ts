// Reading GET /metrics as Prometheus' text exposition format (version 0.0.4) in tests.
import assert from 'node:assert/strict';

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?(?:[0-9.e+-]+|[Nn]a[Nn]|[+-]Inf))$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * The samples of an exposition text, `name{labels}` → value. Asserts that every line is a
 * comment, a HELP/TYPE line or a sample, that each family is TYPEd once, and that every sample
 * belongs to a family TYPEd before it (histograms' `_bucket`, `_sum`, `_count` included).
 */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const typed = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
      if (typed) {
        assert.ok(TYPES.has(typed[2]), `unknown metric type: ${line}`);
        assert.ok(!types.has(typed[1]), `${typed[1]} TYPEd twice`);
        types.set(typed[1], typed[2]);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const name = match[1];
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    assert.ok(types.has(family), `sample of a family without TYPE: ${line}`);
    if (types.get(family) === 'counter') assert.ok(name.endsWith('_total'), `counter without _total: ${name}`);
    samples.set(name + (match[2] ?? ''), Number(match[3]));
  }
  return samples;
}

/** The sum of the samples of `name` (any labels) whose key contains `filter`. */
export function sumOf(samples: Map<string, number>, name: string, filter = ''): number {
  let total = 0;
  for (const [key, value] of samples) if ((key === name || key.startsWith(`${name}{`)) && key.includes(filter)) total += value;
  return total;
}
