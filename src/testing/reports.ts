// What a run says: progress lines, a summary with latency percentiles, JUnit XML (one test case a
// call, grouped by scenario file) and JSON.
import type { ScenarioCallResult, SuiteResult } from './runner.ts';

/** The p-th percentile (0..100) by nearest rank; undefined for no values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface LatencyFigures {
  readonly count: number;
  readonly p50?: number;
  readonly p95?: number;
  readonly max?: number;
}

function figures(values: readonly number[]): LatencyFigures {
  return { count: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : undefined };
}

export interface Summary {
  readonly calls: number;
  readonly passed: number;
  readonly failed: number;
  readonly wallMs: number;
  readonly answerMs: LatencyFigures;
  readonly firstAudioMs: LatencyFigures;
  readonly turnLatencyMs: LatencyFigures;
  readonly callMs: LatencyFigures;
}

export function summarize(result: SuiteResult): Summary {
  const { calls } = result;
  const passed = calls.filter((c) => c.passed).length;
  return {
    calls: calls.length,
    passed,
    failed: calls.length - passed,
    wallMs: result.wallMs,
    answerMs: figures(calls.flatMap((c) => (c.answerMs === undefined ? [] : [c.answerMs]))),
    firstAudioMs: figures(calls.flatMap((c) => (c.firstAudioMs === undefined ? [] : [c.firstAudioMs]))),
    turnLatencyMs: figures(calls.flatMap((c) => c.turnLatenciesMs)),
    callMs: figures(calls.map((c) => c.durationMs)),
  };
}

/** One line per finished call. */
export function progressLine(call: ScenarioCallResult): string {
  if (call.passed) return `  ok    ${call.name} (${call.durationMs} ms)`;
  const kept = [call.recording && `recording ${call.recording}`, call.transcript && `events ${call.transcript}`].filter(Boolean).join(', ');
  return `  FAIL  ${call.name} (${call.durationMs} ms): ${call.error}${kept ? `\n        kept: ${kept}` : ''}`;
}

export function summaryText(result: SuiteResult): string {
  const s = summarize(result);
  const line = (label: string, f: LatencyFigures): string =>
    f.count === 0 ? '' : `  ${label.padEnd(22)} p50 ${f.p50} ms   p95 ${f.p95} ms   max ${f.max} ms   (${f.count})\n`;
  return (
    `${s.passed} passed, ${s.failed} failed, ${s.calls} calls in ${(s.wallMs / 1000).toFixed(2)} s\n` +
    line('answer', s.answerMs) +
    line('time to first audio', s.firstAudioMs) +
    line('turn latency', s.turnLatencyMs) +
    line('call', s.callMs)
  );
}

export function jsonReport(result: SuiteResult): string {
  return `${JSON.stringify({ summary: summarize(result), calls: result.calls }, null, 2)}\n`;
}

const escapeXml = (text: string): string =>
  // Characters XML 1.0 cannot hold at all are dropped; the others escaped.
  text.replace(/[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd]/gu, '').replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function junitXml(result: SuiteResult): string {
  const byFile = new Map<string, ScenarioCallResult[]>();
  for (const call of result.calls) {
    const list = byFile.get(call.file) ?? [];
    list.push(call);
    byFile.set(call.file, list);
  }
  const suites = [...byFile].map(([file, calls]) => {
    const failures = calls.filter((c) => !c.passed).length;
    const seconds = calls.reduce((sum, c) => sum + c.durationMs, 0) / 1000;
    const cases = calls.map((call) => {
      const steps = call.steps.map((s) => `${s.passed ? 'ok  ' : 'FAIL'} ${s.step} (${s.ms} ms)${s.detail ? `: ${s.detail}` : ''}`).join('\n');
      const kept = [call.recording && `[[ATTACHMENT|${call.recording}]]`, call.transcript && `[[ATTACHMENT|${call.transcript}]]`].filter(Boolean).join('\n');
      const failure = call.passed ? '' : `\n      <failure message="${escapeXml(call.error ?? 'failed')}"/>`;
      return `    <testcase classname="${escapeXml(call.scenario)}" name="${escapeXml(call.name)}" time="${(call.durationMs / 1000).toFixed(3)}">${failure}\n      <system-out>${escapeXml(`${steps}\n${kept}`)}</system-out>\n    </testcase>`;
    });
    return `  <testsuite name="${escapeXml(file)}" tests="${calls.length}" failures="${failures}" errors="0" time="${seconds.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`;
}
