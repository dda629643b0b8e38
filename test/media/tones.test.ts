import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countToneParts, parseToneList } from '../../src/media/tones.ts';
import { TONE_NAMES, toneZoneCountries, getToneZone, resolveTone, resolveToneMedia } from '../../src/media/tonezones.ts';
import { DEFAULT_TONE_AMPLITUDE, ToneGenerator } from '../../src/media/tone-generator.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { meanSquare } from '../../src/media/energy.ts';

function render(spec: string, rate: number, frames: number, amplitude?: number): { samples: Int16Array; generator: ToneGenerator } {
  const generator = new ToneGenerator(parseToneList(spec)!, { rate, amplitude });
  const frameSize = rate / 50;
  const samples = new Int16Array(frames * frameSize);
  for (let frame = 0; frame < frames; frame++) generator.fill(samples.subarray(frame * frameSize, (frame + 1) * frameSize));
  return { samples, generator };
}

describe('tone list syntax', () => {
  it('parses frequencies, durations and silence', () => {
    assert.deepEqual(parseToneList('440+480/2000,0/4000'), {
      parts: [
        { frequencies: [440, 480], durationMs: 2000, once: false, modulate: false },
        { frequencies: [0], durationMs: 4000, once: false, modulate: false },
      ],
      repeatFrom: 0,
    });
  });

  it('repeats from the first part not marked with !', () => {
    const tones = parseToneList('!350+440/100,!0/100,350+440')!;
    assert.equal(tones.repeatFrom, 2);
    assert.deepEqual(tones.parts.map((part) => part.once), [true, true, false]);
    assert.equal(tones.parts[2].durationMs, 0);
    assert.equal(parseToneList('!1000/100,!0/50')!.repeatFrom, -1);
  });

  it('understands modulation, MIDI notes and spaces', () => {
    const tones = parseToneList(' 400*16/1000 , M69/10 ')!;
    assert.deepEqual(tones.parts[0], { frequencies: [400, 16], durationMs: 1000, once: false, modulate: true });
    assert.equal(tones.parts[1].frequencies[0], 440);
  });

  it('rejects malformed lists', () => {
    for (const bad of ['', ' ', 'abc', '440/', '440+', '440/x', '1+2+3+4+5', '440,,480', '-5', '400*16*2', 'M200']) {
      assert.equal(parseToneList(bad), undefined, JSON.stringify(bad));
    }
  });
});

describe('tone zones', () => {
  it('defines every indication for every country, all parsable', () => {
    for (const country of ['us', 'uk', 'de', 'fr', 'it', 'jp']) assert.ok(toneZoneCountries().includes(country));
    for (const country of toneZoneCountries()) {
      const zone = getToneZone(country)!;
      assert.ok(zone.ringCadence.length >= 2);
      for (const name of TONE_NAMES) assert.ok(parseToneList(zone.tones[name]), `${country} ${name}`);
    }
  });

  it('resolves names per zone and literal lists', () => {
    assert.deepEqual(resolveTone('busy', 'de'), parseToneList('425/480,0/480'));
    assert.deepEqual(resolveTone('ring'), parseToneList('440+480/2000,0/4000'));
    assert.deepEqual(resolveTone('1000/500'), parseToneList('1000/500'));
    assert.equal(resolveTone('busy', 'atlantis'), undefined);
    assert.deepEqual(resolveToneMedia('ring;tonezone=fr'), parseToneList('440/1500,0/3500'));
    assert.deepEqual(resolveToneMedia('dial', 'it'), parseToneList('425/200,0/200,425/600,0/1000'));
    assert.equal(resolveToneMedia('nonsense'), undefined);
  });
});

describe('ToneGenerator', () => {
  it('follows the US ring cadence and repeats it', () => {
    const { samples } = render('440+480/2000,0/4000', 8000, 400);
    const second = (index: number) => samples.subarray(index * 8000, (index + 1) * 8000);
    for (const on of [0, 1, 6, 7]) {
      const level440 = powerToAmplitude(goertzelPower(second(on), 440, 8000));
      const level480 = powerToAmplitude(goertzelPower(second(on), 480, 8000));
      assert.ok(Math.abs(level440 - DEFAULT_TONE_AMPLITUDE) < 50, `second ${on}: ${level440}`);
      assert.ok(Math.abs(level480 - DEFAULT_TONE_AMPLITUDE) < 50, `second ${on}: ${level480}`);
    }
    for (const off of [2, 3, 4, 5]) assert.equal(meanSquare(second(off)), 0);
  });

  it('keeps phase across frames, so framing does not change the waveform', () => {
    const { samples } = render('350+440/130,0/70,950', 16000, 50);
    const whole = new Int16Array(samples.length);
    new ToneGenerator(parseToneList('350+440/130,0/70,950')!, { rate: 16000 }).fill(whole);
    assert.deepEqual(samples, whole);
  });

  it('plays ! parts once and then reports the end', () => {
    const { samples, generator } = render('!1000/30,!0/10', 8000, 1);
    assert.equal(generator.finished, false);
    const tail = new Int16Array(160).fill(1);
    assert.equal(generator.fill(tail), 160);
    assert.equal(generator.finished, true);
    assert.equal(generator.fill(tail), 0);
    assert.ok(tail.every((sample) => sample === 0));
    assert.ok(powerToAmplitude(goertzelPower(samples, 1000, 8000)) > 4900);
    generator.reset();
    assert.equal(generator.finished, false);
  });

  it('honours the amplitude and never wraps', () => {
    const { samples } = render('1000', 8000, 10, 1000);
    assert.ok(Math.abs(powerToAmplitude(goertzelPower(samples, 1000, 8000)) - 1000) < 10);
    const loud = render('500+700+900', 8000, 10, 30000).samples;
    assert.ok(loud.some((sample) => sample === 32767));
    let largestStep = 0;
    for (let i = 1; i < loud.length; i++) largestStep = Math.max(largestStep, Math.abs(loud[i] - loud[i - 1]));
    assert.ok(largestStep < 40000, 'no wrap-around jumps');
  });

  it('modulates the Japanese ringback', () => {
    const { samples } = render('400*16/1000,0/2000', 8000, 50);
    const carrier = powerToAmplitude(goertzelPower(samples, 400, 8000));
    assert.ok(carrier > 2000 && carrier < DEFAULT_TONE_AMPLITUDE, `carrier ${carrier}`);
    assert.ok(powerToAmplitude(goertzelPower(samples, 16, 8000)) < 100, 'the modulator is not heard on its own');
  });

  it('fills from an offset exactly what it would have filled whole', () => {
    const whole = render('!697+1209/30,!0/10,440', 8000, 8).samples;
    const generator = new ToneGenerator(parseToneList('!697+1209/30,!0/10,440')!, { rate: 8000 });
    const pieces = new Int16Array(whole.length);
    let at = 0;
    for (const offset of [0, 100, 7, 159, 3, 150, 0, 60]) {
      const frame = new Int16Array(160).fill(-1);
      const count = generator.fill(frame, offset);
      assert.equal(count, 160 - offset);
      pieces.set(frame.subarray(offset), at);
      at += count;
    }
    assert.deepEqual(pieces.subarray(0, at), whole.subarray(0, at));
  });

  it('aliases a frequency above the rate as a sampled tone would, with the phase kept in one turn', () => {
    assert.deepEqual(render('8440', 8000, 50).samples, render('440', 8000, 50).samples);
    // The largest frequency Asterisk reads (an unsigned int) sounds at its alias, 705 Hz.
    const { samples } = render('4294967295', 8000, 50);
    assert.ok(Math.abs(powerToAmplitude(goertzelPower(samples, 705, 8000)) - DEFAULT_TONE_AMPLITUDE) < 50);
  });
});

describe('tone list bounds', () => {
  it('refuses values that do not fit an unsigned int, and lists of more than 64 parts', () => {
    assert.equal(parseToneList('440/4294967295')!.parts[0].durationMs, 4294967295);
    assert.equal(parseToneList('440/4294967296'), undefined);
    assert.equal(parseToneList(`440/${'9'.repeat(400)}`), undefined);
    assert.equal(parseToneList('4294967296'), undefined);
    assert.equal(parseToneList('9'.repeat(400)), undefined, 'a frequency of Infinity');
    assert.equal(parseToneList(Array(64).fill('440/10').join(','))!.parts.length, 64);
    assert.equal(parseToneList(Array(65).fill('440/10').join(',')), undefined);
    assert.equal(countToneParts('1,2,,3'), 4);
  });
});
