// The caller's listening: each expect_audio looks at what was heard since the previous step ended
// (the cursor) and moves the cursor past what it found, so "prompt A, then prompt B" means B was
// heard after A. Prompts are looked for every 100 ms over the new audio (plus one prompt length
// back, so a prompt straddling two looks is not missed).
import { readWavFile } from '../media/wav-reader.ts';
import { CALLER_RATE, DEFAULT_PROMPT_THRESHOLD, DEFAULT_SOUND_DIRS, PromptReference, SAMPLES_PER_FRAME, findPromptFile, frameDbfs, toCallerRate, toneShare } from './audio-match.ts';
import type { HeardAudio } from './heard-audio.ts';
import { sleep } from './media-leg.ts';
import type { AudioExpectation } from './steps.ts';

/** A frame louder than this is audio (speech, a prompt, a tone). */
const AUDIO_DBFS = -40;
/** A frame quieter than this is silence. */
const SILENCE_DBFS = -45;
/** A tone holds at least this share of a frame's energy at its frequency. */
const TONE_SHARE = 0.7;
const POLL_MS = 50;
/** New audio (in samples) between two correlations: 250 ms (each costs a transform of the window). */
const CORRELATE_EVERY = CALLER_RATE / 4;
/** Speech files a caller may play: at most 5 minutes each. */
const MAX_SPEECH_SAMPLES = 300 * CALLER_RATE;

/** The sound files of a run, read once and shared by its callers. */
export class PromptLibrary {
  private readonly prompts = new Map<string, PromptReference>();
  private readonly speechFiles = new Map<string, Int16Array>();

  constructor(
    readonly soundDirs: readonly string[] = DEFAULT_SOUND_DIRS,
    readonly baseDir = process.cwd(),
  ) {}

  prompt(name: string): PromptReference {
    let reference = this.prompts.get(name);
    if (!reference) {
      reference = PromptReference.fromFile(name, findPromptFile(name, this.soundDirs, this.baseDir));
      this.prompts.set(name, reference);
    }
    return reference;
  }

  /** A WAV (or sound name) as 8 kHz samples to say into the call. */
  speech(name: string): Int16Array {
    let samples = this.speechFiles.get(name);
    if (!samples) {
      const wav = readWavFile(findPromptFile(name, this.soundDirs, this.baseDir));
      if (wav.samples.length / wav.rate > MAX_SPEECH_SAMPLES / CALLER_RATE) throw new Error(`${name} is longer than 5 minutes`);
      samples = Int16Array.from(toCallerRate(wav.samples, wav.rate), (s) => Math.max(-32768, Math.min(32767, Math.round(s))));
      this.speechFiles.set(name, samples);
    }
    return samples;
  }
}

export class Listener {
  /** Position (samples) from which the next expectation looks. */
  private cursor = 0;
  private stopped = false;

  constructor(
    private readonly heard: HeardAudio,
    private readonly prompts: PromptLibrary,
  ) {}

  /** Moves the cursor to a time: what was heard before it no longer counts for the next step. */
  skipTo(time: number): void {
    this.cursor = Math.max(this.cursor, Math.min(this.heard.length, this.heard.positionAt(time)));
  }

  stop(): void {
    this.stopped = true;
  }

  /** Milliseconds from `time` to the first audio heard at or after it (undefined: none heard). */
  firstAudioAfter(time: number): number | undefined {
    const all = this.heard.all();
    for (let at = this.heard.positionAt(time); at + SAMPLES_PER_FRAME <= all.length; at += SAMPLES_PER_FRAME) {
      if (frameDbfs(all.subarray(at, at + SAMPLES_PER_FRAME)) > AUDIO_DBFS) return Math.max(0, Math.round(this.heard.timeAt(at) - time));
    }
    return undefined;
  }

  /** Waits for the expectation; resolves with what was found, rejects with what was heard instead. */
  async expect(expectation: AudioExpectation, timeoutMs: number, callEnded: () => boolean): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    const look = 'prompt' in expectation ? this.promptLook(expectation.prompt, expectation.threshold ?? DEFAULT_PROMPT_THRESHOLD) : this.frameLook(expectation);
    for (;;) {
      const found = look.step(false);
      if (found !== undefined) return found;
      const ended = callEnded() || this.stopped;
      if (ended || Date.now() >= deadline) {
        const last = look.step(true);
        if (last !== undefined) return last;
        throw new Error(`${look.missing()} ${ended ? 'before the call ended' : `within ${timeoutMs} ms`}`);
      }
      await sleep(POLL_MS);
    }
  }

  private promptLook(name: string, threshold: number): { step(final: boolean): string | undefined; missing(): string } {
    const reference = this.prompts.prompt(name);
    const length = reference.samples.length;
    const from = this.cursor;
    let checkedTo = from;
    let previousSilent = false;
    let best = { score: 0, at: -1 };
    return {
      step: (final) => {
        const end = this.heard.length;
        if (end - from < length || (!final && end - checkedTo < CORRELATE_EVERY)) return undefined;
        const windowStart = Math.max(from, checkedTo - length + 1);
        // A second stretch of silence in a row cannot hold the end of a prompt (the first may: a
        // prompt's quiet tail), so it costs no correlation.
        const silent = isSilent(this.heard.all(), checkedTo, end);
        const skip = !final && silent && previousSilent;
        previousSilent = silent;
        if (skip) {
          checkedTo = end;
          return undefined;
        }
        const match = reference.bestMatch(this.heard.floats(windowStart, end));
        checkedTo = end;
        if (match.score > best.score) best = { score: match.score, at: windowStart + match.offset };
        if (match.score < threshold) return undefined;
        this.cursor = windowStart + match.offset + length;
        return `score ${match.score.toFixed(2)}, heard from ${ms(windowStart + match.offset)} to ${ms(this.cursor)}`;
      },
      missing: () =>
        `prompt "${name}" not heard (best score ${best.score.toFixed(2)}${best.at >= 0 ? ` at ${ms(best.at)}` : ''}, needs ${threshold}; ${ms(this.heard.length - from)} heard since the previous step)`,
    };
  }

  /** Tone, silence and speech: a run of consecutive frames that qualify, long enough. */
  private frameLook(expectation: Exclude<AudioExpectation, { prompt: string }>): { step(final: boolean): string | undefined; missing(): string } {
    let qualifies: (frame: Int16Array) => boolean;
    let needMs: number;
    let what: string;
    if ('tone' in expectation) {
      const frequency = expectation.tone;
      qualifies = (frame) => frameDbfs(frame) > AUDIO_DBFS && toneShare(frame, frequency) >= TONE_SHARE;
      needMs = expectation.minMs ?? 200;
      what = `a ${frequency} Hz tone of ${needMs} ms`;
    } else if ('silence' in expectation) {
      qualifies = (frame) => frameDbfs(frame) < SILENCE_DBFS;
      needMs = expectation.silence;
      what = `${needMs} ms of silence`;
    } else {
      qualifies = (frame) => frameDbfs(frame) > AUDIO_DBFS;
      needMs = expectation.speech;
      what = `${needMs} ms of speech`;
    }
    const needFrames = Math.max(1, Math.ceil(needMs / 20));
    let at = this.cursor;
    let runStart = at;
    let longest = 0;
    return {
      step: () => {
        const all = this.heard.all();
        for (; at + SAMPLES_PER_FRAME <= all.length; at += SAMPLES_PER_FRAME) {
          if (!qualifies(all.subarray(at, at + SAMPLES_PER_FRAME))) {
            runStart = at + SAMPLES_PER_FRAME;
            continue;
          }
          const frames = (at + SAMPLES_PER_FRAME - runStart) / SAMPLES_PER_FRAME;
          longest = Math.max(longest, frames);
          if (frames >= needFrames) {
            at += SAMPLES_PER_FRAME;
            this.cursor = at;
            return `from ${ms(runStart)} to ${ms(at)}`;
          }
        }
        return undefined;
      },
      missing: () => `${what} not heard (longest run ${longest * 20} ms)`,
    };
  }
}

function isSilent(samples: Int16Array, from: number, to: number): boolean {
  for (let at = from; at + SAMPLES_PER_FRAME <= to; at += SAMPLES_PER_FRAME) {
    if (frameDbfs(samples.subarray(at, at + SAMPLES_PER_FRAME)) >= SILENCE_DBFS) return false;
  }
  return true;
}

/** A sample position as seconds into the call's audio. */
function ms(position: number): string {
  return `${(position / CALLER_RATE).toFixed(2)} s`;
}
