// Scenario files and what callers compute without a server: parsing with errors that name the
// file and the step, the JSON Schema beside the parser, prompt recognition, percentiles and JUnit.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { linearToUlaw, ulawToLinear } from '../../src/media/g711.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { PromptReference } from '../../src/testing/audio-match.ts';
import { junitXml, percentile } from '../../src/testing/reports.ts';
import { duration, parseScenarios, readScenarioFile, ScenarioError } from '../../src/testing/scenario.ts';

const SCHEMA = fileURLToPath(new URL('../../docs/schemas/scenario.schema.json', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/voice-apps/scenarios/', import.meta.url));
const SOUNDS = '/usr/share/asterisk/sounds/en';

describe('scenario files', () => {
  test('every step kind and the short forms', () => {
    const [scenario] = parseScenarios(
      {
        name: 'all steps',
        dial: { to: '100@apps', caller_id: 2001, variables: { A: 1 }, headers: { 'X-Test': 'yes' }, answer_timeout: '3s' },
        steps: [
          { expect_audio: 'dir-welcome' },
          { expect_audio: { tone: 440, min: '300ms', timeout: '2s' } },
          { expect_audio: { silence: '1.5s' } },
          { expect_audio: { speech: 200 } },
          { send_dtmf: 12 },
          { play: 'hello.wav' },
          { expect_event: { type: 'ChannelEnteredBridge', match: { 'bridge.name': 'q' } } },
          { wait: '1m' },
          { record: 'out.wav' },
          'hangup',
          { expect_hangup: { cause: 16 } },
        ],
      },
      'inline',
    );
    assert.equal(scenario!.dial.callerId, '2001');
    assert.deepEqual(scenario!.dial.variables, { A: '1' });
    assert.equal(scenario!.dial.answerTimeoutMs, 3000);
    assert.deepEqual(scenario!.steps.map((s) => s.kind), ['expect_audio', 'expect_audio', 'expect_audio', 'expect_audio', 'send_dtmf', 'play', 'expect_event', 'wait', 'record', 'hangup', 'expect_hangup']);
    assert.deepEqual(scenario!.steps[1], { kind: 'expect_audio', tone: 440, minMs: 300, timeoutMs: 2000 });
    assert.deepEqual(scenario!.steps[7], { kind: 'wait', ms: 60_000 });
  });

  test('mistakes are refused with the file and the step named', () => {
    const refuse = (document: unknown, message: RegExp): void => assert.throws(() => parseScenarios(document, 'f.yaml'), (err: unknown) => err instanceof ScenarioError && message.test(err.message));
    refuse({ dial: 'x@y', steps: [{ expect_audio: { promt: 'a' } }] }, /^f\.yaml: steps\[0\]\.expect_audio: unknown key "promt"/);
    refuse({ dial: 'x@y', steps: [{ expect_audio: { prompt: 'a', tone: 440 } }] }, /exactly one of prompt, tone, silence, speech/);
    refuse({ dial: 'x@y', steps: [{ send_dtmf: '1x' }] }, /steps\[0\]\.send_dtmf: digits/);
    refuse({ dial: 'x@y', steps: [{ dance: 1 }] }, /unknown step "dance"/);
    refuse({ dial: 'x@y', steps: [{ wait: '-1s' }] }, /a duration such as/);
    refuse({ dial: 'x@y', steps: [{ wait: 1, hangup: null }] }, /a step is one of/);
    refuse({ dial: 'x@y', steps: [{ expect_hangup: { cause: 300 } }] }, /cause: an integer from 0 to 127/);
    refuse({ dial: {}, steps: [] }, /dial\.to: expected text/);
    refuse({ steps: [] }, /dial: expected a mapping/);
    refuse({ dial: 'x@y', steps: [], repeat: 0 }, /repeat: an integer from 1/);
    refuse({ scenarios: [] }, /scenarios must be a non-empty list/);
    refuse(['a'], /expected a mapping/);
    assert.equal(duration('1.5s', 'x'), 1500);
    assert.throws(() => duration('2h', 'x'), ScenarioError);
  });

  test('the examples read, and the JSON Schema names every step kind and dial key the parser knows', () => {
    for (const file of readdirSync(EXAMPLES)) assert.ok(readScenarioFile(`${EXAMPLES}${file}`).length === 1, file);
    const schema = readFileSync(SCHEMA, 'utf8');
    for (const key of ['expect_audio', 'send_dtmf', 'play', 'expect_event', 'wait', 'hangup', 'expect_hangup', 'record', 'caller_id', 'variables', 'headers', 'sip_endpoint', 'answer_timeout', 'repeat', 'threshold', 'tone', 'silence', 'speech', 'match']) {
      assert.ok(schema.includes(`"${key}"`), key);
    }
  });
});

describe('prompt recognition', () => {
  const load = (name: string): Int16Array => readWavFile(`${SOUNDS}/${name}.wav`).samples;

  test('a prompt is found through µ-law at −6 dB between other audio, and another prompt is not', { skip: !existsSync(`${SOUNDS}/hello-world.wav`) }, () => {
    const hello = new PromptReference('hello-world', Float32Array.from(load('hello-world')));
    const before = load('goodbye');
    const heard = new Float32Array(before.length + 4000 + load('hello-world').length + 4000);
    heard.set(Float32Array.from(before), 0);
    const quieter = load('hello-world').map((s) => ulawToLinear(linearToUlaw(Math.round(s / 2))));
    heard.set(Float32Array.from(quieter), before.length + 4000);
    const found = hello.bestMatch(heard);
    assert.ok(found.score > 0.95, `score ${found.score}`);
    assert.ok(Math.abs(found.offset - (before.length + 4000)) < 800, `at ${found.offset}`);
    assert.ok(hello.bestMatch(Float32Array.from([...load('goodbye'), ...new Int16Array(12000)])).score < 0.5);
  });
});

describe('reports', () => {
  test('percentiles by nearest rank', () => {
    assert.equal(percentile([], 50), undefined);
    assert.equal(percentile([5], 95), 5);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50), 5);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), 10);
  });

  test('JUnit XML escapes what a server or a scenario put in names and messages', () => {
    const xml = junitXml({
      wallMs: 10,
      calls: [{ name: 'a <b> & "c"', scenario: 's', file: 'f.yaml', passed: false, error: 'heard \u0001 <nothing>', steps: [], turnLatenciesMs: [], durationMs: 5 }],
    });
    assert.match(xml, /name="a &#60;b&#62; &#38; &#34;c&#34;"/);
    assert.match(xml, /<failure message="heard  &#60;nothing&#62;"\/>/);
  });
});
