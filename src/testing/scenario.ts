// Scenario files: YAML (documented by docs/schemas/scenario.schema.json) read into a dial and its
// steps. Everything in a file is checked here, with the file and the step named in the error, so
// a typo fails before any call is made.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AudioExpectation, DialSpec, Step } from './steps.ts';

export interface Scenario {
  readonly name: string;
  readonly file: string;
  readonly dial: DialSpec;
  readonly steps: readonly Step[];
  /** How many calls of it a suite makes (`repeat`, default 1). */
  readonly repeat: number;
}

export class ScenarioError extends Error {}

const MAX_FILE_BYTES = 1 << 20;
const MAX_STEPS = 1000;
const MAX_REPEAT = 10_000;
const MAX_MS = 3_600_000;
const DTMF = /^[0-9A-Da-d*#]{1,64}$/;

type Json = Record<string, unknown>;

/** The scenarios of a file: one (a mapping with `dial` and `steps`) or several (`scenarios: [...]`). */
export function readScenarioFile(file: string): Scenario[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(`${file}: ${(err as Error).message}`);
  }
  if (text.length > MAX_FILE_BYTES) throw new ScenarioError(`${file}: larger than 1 MiB`);
  let document: unknown;
  try {
    document = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new ScenarioError(`${file}: not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  return parseScenarios(document, file);
}

export function parseScenarios(document: unknown, file: string): Scenario[] {
  const root = mapping(document, file);
  if ('scenarios' in root) {
    known(root, ['scenarios'], file);
    if (!Array.isArray(root.scenarios) || root.scenarios.length === 0) throw new ScenarioError(`${file}: scenarios must be a non-empty list`);
    return root.scenarios.map((entry, i) => parseScenario(entry, file, `${file}: scenarios[${i}]`));
  }
  return [parseScenario(root, file, file)];
}

function parseScenario(value: unknown, file: string, where: string): Scenario {
  const root = mapping(value, where);
  known(root, ['name', 'dial', 'steps', 'repeat'], where);
  const name = root.name === undefined ? file.replace(/^.*\//, '').replace(/\.ya?ml$/, '') : text(root.name, `${where}: name`, 200);
  const repeat = root.repeat === undefined ? 1 : integer(root.repeat, `${where}: repeat`, 1, MAX_REPEAT);
  if (!Array.isArray(root.steps)) throw new ScenarioError(`${where}: steps must be a list`);
  if (root.steps.length > MAX_STEPS) throw new ScenarioError(`${where}: more than ${MAX_STEPS} steps`);
  return { name, file, repeat, dial: parseDial(root.dial, `${where}: dial`), steps: root.steps.map((step, i) => parseStep(step, `${where}: steps[${i}]`)) };
}

function parseDial(value: unknown, where: string): DialSpec {
  // `dial: 100@ivr` is short for `dial: { to: 100@ivr }`.
  const dial = typeof value === 'string' ? { to: value } : mapping(value, where);
  known(dial, ['to', 'caller_id', 'variables', 'headers', 'sip_endpoint', 'answer_timeout'], where);
  return {
    to: text(dial.to, `${where}.to`, 500),
    callerId: dial.caller_id === undefined ? undefined : text(String(dial.caller_id), `${where}.caller_id`, 200),
    variables: dial.variables === undefined ? undefined : strings(dial.variables, `${where}.variables`),
    headers: dial.headers === undefined ? undefined : strings(dial.headers, `${where}.headers`),
    sipEndpoint: dial.sip_endpoint === undefined ? undefined : text(dial.sip_endpoint, `${where}.sip_endpoint`, 200),
    answerTimeoutMs: dial.answer_timeout === undefined ? undefined : duration(dial.answer_timeout, `${where}.answer_timeout`),
  };
}

function parseStep(value: unknown, where: string): Step {
  if (value === 'hangup') return { kind: 'hangup' };
  if (value === 'expect_hangup') return { kind: 'expect_hangup' };
  const step = mapping(value, where);
  const keys = Object.keys(step);
  if (keys.length !== 1) throw new ScenarioError(`${where}: a step is one of expect_audio, send_dtmf, play, expect_event, wait, hangup, expect_hangup, record (found ${keys.join(', ') || 'nothing'})`);
  const kind = keys[0]!;
  const body = step[kind];
  const at = `${where}.${kind}`;
  switch (kind) {
    case 'expect_audio':
      return { kind, ...audioExpectation(body, at) };
    case 'send_dtmf': {
      const digits = String(body);
      if (!DTMF.test(digits)) throw new ScenarioError(`${at}: digits are 0-9, A-D, * and # (1 to 64 of them)`);
      return { kind, digits };
    }
    case 'play':
      return { kind, file: text(body, at, 1024) };
    case 'expect_event': {
      const event = typeof body === 'string' ? { type: body } : mapping(body, at);
      known(event, ['type', 'match', 'timeout'], at);
      const match = event.match === undefined ? undefined : scalars(event.match, `${at}.match`);
      return { kind, event: text(event.type, `${at}.type`, 100), match, timeoutMs: optionalDuration(event.timeout, `${at}.timeout`) };
    }
    case 'wait':
      return { kind, ms: duration(body, at) };
    case 'hangup':
      if (body !== null && body !== undefined && body !== true) throw new ScenarioError(`${at}: takes no value`);
      return { kind };
    case 'expect_hangup': {
      if (body === null || body === undefined || body === true) return { kind };
      const hangup = mapping(body, at);
      known(hangup, ['cause', 'timeout'], at);
      return { kind, cause: hangup.cause === undefined ? undefined : integer(hangup.cause, `${at}.cause`, 0, 127), timeoutMs: optionalDuration(hangup.timeout, `${at}.timeout`) };
    }
    case 'record':
      return { kind, file: text(body, at, 1024) };
    default:
      throw new ScenarioError(`${where}: unknown step "${kind.slice(0, 40)}" (expect_audio, send_dtmf, play, expect_event, wait, hangup, expect_hangup, record)`);
  }
}

function audioExpectation(value: unknown, where: string): AudioExpectation & { timeoutMs?: number } {
  // `expect_audio: hello-world` is short for `expect_audio: { prompt: hello-world }`.
  const audio = typeof value === 'string' ? { prompt: value } : mapping(value, where);
  known(audio, ['prompt', 'threshold', 'tone', 'min', 'silence', 'speech', 'timeout'], where);
  const kinds = ['prompt', 'tone', 'silence', 'speech'].filter((k) => audio[k] !== undefined);
  if (kinds.length !== 1) throw new ScenarioError(`${where}: give exactly one of prompt, tone, silence, speech`);
  const timeoutMs = optionalDuration(audio.timeout, `${where}.timeout`);
  if (audio.prompt !== undefined) {
    const threshold = audio.threshold === undefined ? undefined : Number(audio.threshold);
    if (threshold !== undefined && !(threshold > 0 && threshold <= 1)) throw new ScenarioError(`${where}.threshold: a number in (0, 1]`);
    return { prompt: text(audio.prompt, `${where}.prompt`, 1024), threshold, timeoutMs };
  }
  if (audio.tone !== undefined) return { tone: integer(audio.tone, `${where}.tone`, 50, 3900), minMs: optionalDuration(audio.min, `${where}.min`), timeoutMs };
  if (audio.silence !== undefined) return { silence: duration(audio.silence, `${where}.silence`), timeoutMs };
  return { speech: duration(audio.speech, `${where}.speech`), timeoutMs };
}

function mapping(value: unknown, where: string): Json {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ScenarioError(`${where}: expected a mapping`);
  return value as Json;
}

function known(value: Json, keys: readonly string[], where: string): void {
  for (const key of Object.keys(value)) if (!keys.includes(key)) throw new ScenarioError(`${where}: unknown key "${key.slice(0, 40)}" (known: ${keys.join(', ')})`);
}

function text(value: unknown, where: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ScenarioError(`${where}: expected text`);
  if (value.length > max) throw new ScenarioError(`${where}: longer than ${max} characters`);
  return value;
}

function integer(value: unknown, where: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new ScenarioError(`${where}: an integer from ${min} to ${max}`);
  return value;
}

function strings(value: unknown, where: string): Record<string, string> {
  const entries = Object.entries(mapping(value, where));
  if (entries.length > 100) throw new ScenarioError(`${where}: more than 100 entries`);
  const out: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (v === null || typeof v === 'object') throw new ScenarioError(`${where}.${key.slice(0, 40)}: expected text`);
    out[key] = String(v);
  }
  return out;
}

function scalars(value: unknown, where: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, v] of Object.entries(mapping(value, where))) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new ScenarioError(`${where}.${key.slice(0, 40)}: expected text, a number or a boolean`);
    out[key] = v;
  }
  return out;
}

/** `250` (ms), `250ms`, `1.5s`, `2m`. */
export function duration(value: unknown, where: string): number {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else {
    const match = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(value) : null;
    if (!match) throw new ScenarioError(`${where}: a duration such as 500ms, 2s or 1m`);
    ms = Number(match[1]) * (match[2] === 's' ? 1000 : match[2] === 'm' ? 60_000 : 1);
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS) throw new ScenarioError(`${where}: a duration from 0 to 1 hour`);
  return Math.round(ms);
}

function optionalDuration(value: unknown, where: string): number | undefined {
  return value === undefined ? undefined : duration(value, where);
}
