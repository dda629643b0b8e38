// One virtual caller: it puts a media WebSocket channel (its ears and mouth) and its own calling
// channel into a bridge of its own, dials, and runs its steps against what it hears and the ARI
// events of the call. The calling channel is made with /channels/create and put in the bridge
// before it dials, so not a frame of the answer is lost.
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildPcm16MonoHeader } from '../media/wav.ts';
import type { AriEvent, AriLink } from './ari-link.ts';
import { CALLER_RATE } from './audio-match.ts';
import { HeardAudio } from './heard-audio.ts';
import { Listener, type PromptLibrary } from './listener.ts';
import { MediaLeg, sleep } from './media-leg.ts';
import { DEFAULT_STEP_TIMEOUT_MS, describeStep, type CallResult, type DialSpec, type Step, type StepResult } from './steps.ts';

/** Events kept per call for expect_event and the transcript. */
const MAX_EVENTS = 5000;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

export interface CallerOptions {
  readonly name: string;
  readonly link: AriLink;
  readonly prompts: PromptLibrary;
  /** Where a failing call's recording and transcript go (none kept when undefined). */
  readonly artifactsDir?: string;
}

class StepFailure extends Error {}

export class Caller {
  private readonly heard = new HeardAudio();
  private readonly listener: Listener;
  private readonly events: { at: number; event: AriEvent }[] = [];
  private eventCursor = 0;
  private eventWaiters = new Set<() => void>();
  private readonly callingId = randomUUID();
  /** The far half of a Local channel: the channel the application under test gets. */
  private readonly farId = randomUUID();
  /** The media channel's id, chosen here like the others: its events are this call's from the first. */
  private readonly mediaId = randomUUID();
  private readonly ids: string[];
  private mediaChannelId: string | undefined;
  private bridgeId: string | undefined;
  private media: MediaLeg | undefined;
  private answeredAt: number | undefined;
  private hungUp = false;
  /** The calling channel is gone (whoever hung up). */
  private callEnded = false;
  private recordTo: string | undefined;
  private readonly utteranceEnds: number[] = [];

  constructor(private readonly options: CallerOptions) {
    this.ids = [this.callingId, this.farId];
    this.listener = new Listener(this.heard, options.prompts);
  }

  /** Dials and runs the steps; never throws: a failure is in the result. */
  async run(dial: DialSpec, steps: readonly Step[]): Promise<CallResult> {
    const started = Date.now();
    const results: StepResult[] = [];
    const stopListening = this.options.link.listen((event, raw) => this.onEvent(event, raw));
    let error: string | undefined;
    let answerMs: number | undefined;
    try {
      await this.setUp(dial);
      try {
        answerMs = await this.dial(dial);
      } catch (err) {
        throw new StepFailure(`dial ${dial.to}: ${(err as Error).message}`);
      }
      for (const [index, step] of steps.entries()) {
        const stepStart = Date.now();
        try {
          const detail = await this.perform(step);
          results.push({ step: describeStep(step), passed: true, ms: Date.now() - stepStart, detail });
        } catch (err) {
          const message = (err as Error).message;
          results.push({ step: describeStep(step), passed: false, ms: Date.now() - stepStart, detail: message });
          throw new StepFailure(`step ${index + 1} (${describeStep(step)}): ${message}`);
        }
      }
    } catch (err) {
      error = err instanceof StepFailure ? err.message : `setting the call up: ${(err as Error).message}`;
    } finally {
      stopListening();
      await this.tearDown();
    }
    const durationMs = Date.now() - started;
    const kept = this.keep(error !== undefined);
    return {
      name: this.options.name,
      passed: error === undefined,
      error,
      steps: results,
      answerMs,
      firstAudioMs: this.answeredAt === undefined ? undefined : this.listener.firstAudioAfter(this.answeredAt),
      turnLatenciesMs: this.utteranceEnds.flatMap((end) => {
        const latency = this.listener.firstAudioAfter(end);
        return latency === undefined ? [] : [latency];
      }),
      durationMs,
      ...kept,
    };
  }

  /**
   * The bridge, the media channel with its WebSocket and the calling channel, made side by side
   * (a suite sets up many calls at once: round trips in a row are what makes answering slow),
   * then both channels put in the bridge before anything is dialed.
   */
  private async setUp(dial: DialSpec): Promise<void> {
    const { link } = this.options;
    const variables = dialVariables(dial);
    const endpoint = endpointFor(dial);
    const bridge = link.request('POST', '/bridges', { type: 'mixing', name: `caller ${this.options.name}`.slice(0, 64) }).then((b) => {
      this.bridgeId = (b as { id: string }).id;
    });
    const media = this.openMedia();
    const calling = link
      .request('POST', '/channels/create', { endpoint, app: link.app, channelId: this.callingId, otherChannelId: this.farId }, { variables })
      .catch((err: unknown) => {
        throw new Error(`dial ${dial.to}: ${(err as Error).message}`);
      });
    await settleAll([bridge, media, calling]);
    await settleAll([
      link.request('POST', `/bridges/${this.bridgeId}/addChannel`, { channel: this.mediaChannelId! }),
      link.request('POST', `/bridges/${this.bridgeId}/addChannel`, { channel: this.callingId }),
    ]);
  }

  private async openMedia(): Promise<void> {
    const { link } = this.options;
    const channel = (await link.request('POST', '/channels/externalMedia', {
      app: link.app,
      channelId: this.mediaId,
      external_host: 'INCOMING',
      transport: 'websocket',
      encapsulation: 'none',
      connection_type: 'server',
      format: 'slin',
    })) as { id: string; channelvars?: Record<string, string> };
    this.mediaChannelId = channel.id;
    const connectionId = channel.channelvars?.MEDIA_WEBSOCKET_CONNECTION_ID;
    if (!connectionId) throw new Error('externalMedia gave no MEDIA_WEBSOCKET_CONNECTION_ID');
    this.heard.begin();
    this.media = await MediaLeg.open(link.openMedia(connectionId), this.heard);
    await this.waitForEvent('the media channel entering the callers application', 5000, (e) => e.type === 'StasisStart' && channelId(e) === channel.id, true);
  }

  /** Dials the calling channel (already in the bridge) and waits for the answer; the ms it took. */
  private async dial(dial: DialSpec): Promise<number> {
    const { link } = this.options;
    const started = Date.now();
    const timeoutMs = dial.answerTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
    await link.request('POST', `/channels/${this.callingId}/dial`, { timeout: String(Math.ceil(timeoutMs / 1000)) });
    const answer = await this.waitForEvent('the answer', timeoutMs, (e) => {
      if (channelId(e) !== this.callingId) return false;
      if (e.type === 'ChannelDestroyed') throw new Error(`not answered: ${String(e.cause_txt ?? e.cause)} (cause ${String(e.cause)})`);
      return e.type === 'ChannelStateChange' && channelState(e) === 'Up';
    }, true);
    this.answeredAt = answer.at;
    return answer.at - started;
  }

  private async perform(step: Step): Promise<string | undefined> {
    const timeoutMs = 'timeoutMs' in step && step.timeoutMs !== undefined ? step.timeoutMs : DEFAULT_STEP_TIMEOUT_MS;
    switch (step.kind) {
      case 'expect_audio':
        return this.listener.expect(step, timeoutMs, () => this.hungUp || this.callEnded || !this.media?.isOpen);
      case 'send_dtmf':
        this.assertLive();
        // What the application says in answer may start with the first digit: listen from here on.
        this.listener.skipTo(Date.now());
        await this.options.link.request('POST', `/channels/${this.callingId}/dtmf`, { dtmf: step.digits, duration: '100', between: '100' });
        // The request returns before the digits are out: wait for them so the next step's clock is fair.
        await sleep(step.digits.length * 200);
        return undefined;
      case 'play': {
        this.assertLive();
        const samples = this.options.prompts.speech(step.file);
        await this.media!.say(samples);
        this.utteranceEnds.push(Date.now());
        this.listener.skipTo(Date.now());
        return `${Math.round((samples.length / CALLER_RATE) * 1000)} ms said`;
      }
      case 'expect_event': {
        const found = await this.waitForEvent(describeStep(step), timeoutMs, (e) => e.type === step.event && matches(e, step.match ?? {}), false);
        return `after ${found.at - (this.answeredAt ?? found.at)} ms from answer`;
      }
      case 'wait':
        await sleep(step.ms);
        return undefined;
      case 'hangup':
        this.assertLive();
        this.hungUp = true;
        await this.options.link.request('DELETE', `/channels/${this.callingId}`);
        return undefined;
      case 'expect_hangup': {
        const ended = await this.waitForEvent('the far end to hang up', timeoutMs, (e) => e.type === 'ChannelDestroyed' && this.ids.includes(channelId(e) ?? ''), true);
        this.hungUp = true;
        const cause = Number(ended.event.cause);
        if (step.cause !== undefined && cause !== step.cause) throw new Error(`hung up with cause ${cause} (${String(ended.event.cause_txt)}), expected ${step.cause}`);
        return `cause ${cause}`;
      }
      case 'record':
        this.recordTo = step.file;
        return undefined;
    }
  }

  private assertLive(): void {
    if (this.hungUp || this.callEnded || !this.media?.isOpen) throw new Error('the call has already ended');
  }

  private onEvent(event: AriEvent, raw: string): void {
    // Only the events of this call: those naming one of its channels (the application under test
    // sees the far half of the Local channel) or its media channel (a server that ignored the id
    // asked for gave it another).
    const media = this.mediaChannelId ?? this.mediaId;
    if (!this.ids.some((id) => mentions(raw, id)) && !mentions(raw, this.mediaId) && !(media !== this.mediaId && mentions(raw, media))) return;
    if (event.type === 'ChannelDestroyed' && channelId(event) === this.callingId) this.callEnded = true;
    if (this.events.length >= MAX_EVENTS) return;
    this.events.push({ at: Date.now(), event });
    for (const waiter of this.eventWaiters) waiter();
  }

  /**
   * The first event (from the step cursor on, or from the start with `fromStart`) that satisfies
   * `accept`, waiting up to `timeoutMs`; `accept` may throw to fail the wait at once.
   */
  private waitForEvent(what: string, timeoutMs: number, accept: (event: AriEvent) => boolean, fromStart: boolean): Promise<{ at: number; event: AriEvent }> {
    return new Promise((resolve, reject) => {
      let index = fromStart ? 0 : this.eventCursor;
      const check = (): void => {
        try {
          for (; index < this.events.length; index++) {
            const entry = this.events[index]!;
            if (accept(entry.event)) {
              if (!fromStart) this.eventCursor = index + 1;
              finish();
              resolve(entry);
              return;
            }
          }
        } catch (err) {
          finish();
          reject(err as Error);
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.eventWaiters.delete(check);
      };
      this.eventWaiters.add(check);
      check();
    });
  }

  private async tearDown(): Promise<void> {
    const { link } = this.options;
    const quietly = (p: Promise<unknown>): Promise<unknown> => p.catch(() => undefined);
    this.listener.stop();
    await Promise.all([
      quietly(link.request('DELETE', `/channels/${this.callingId}`)),
      this.mediaChannelId ? quietly(link.request('DELETE', `/channels/${this.mediaChannelId}`)) : undefined,
    ]);
    if (this.bridgeId) await quietly(link.request('DELETE', `/bridges/${this.bridgeId}`));
    this.media?.close();
  }

  /** Writes the recording (asked for, or on failure) and, on failure, the event transcript. */
  private keep(failed: boolean): { recording?: string; transcript?: string } {
    const kept: { recording?: string; transcript?: string } = {};
    const base = this.options.artifactsDir ? `${this.options.artifactsDir}/${safeName(this.options.name)}` : undefined;
    const recording = this.recordTo ?? (failed && base ? `${base}.wav` : undefined);
    if (recording) {
      writeWav(recording, this.heard.all());
      kept.recording = recording;
    }
    if (failed && base) {
      const transcript = `${base}.events.jsonl`;
      mkdirSync(dirname(transcript), { recursive: true });
      writeFileSync(transcript, this.events.map((e) => JSON.stringify({ at: new Date(e.at).toISOString(), ...e.event })).join('\n') + '\n');
      kept.transcript = transcript;
    }
    return kept;
  }
}

/** Waits for all, then throws the first failure (so nothing is left running behind an error). */
async function settleAll(work: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The calling channel's variables: the scenario's, its caller id and its SIP headers. */
function dialVariables(dial: DialSpec): Record<string, string> {
  const variables: Record<string, string> = { ...dial.variables };
  if (dial.callerId !== undefined) variables['CALLERID(all)'] = dial.callerId;
  for (const [name, value] of Object.entries(dial.headers ?? {})) {
    if (!HEADER_NAME.test(name) || /[\r\n]/.test(value)) throw new Error(`bad SIP header ${JSON.stringify(name)}`);
    variables[`PJSIP_HEADER(add,${name})`] = value;
  }
  return variables;
}

function endpointFor(dial: DialSpec): string {
  const to = dial.to.trim();
  if (/^sips?:/i.test(to)) {
    if (!dial.sipEndpoint) throw new Error(`dialing ${to} needs sip_endpoint: the PJSIP endpoint the call goes out from`);
    return `PJSIP/${dial.sipEndpoint}/${to}`;
  }
  if (to.includes('/')) return to;
  const local = /^([^@\s]+)@([^@\s]+)$/.exec(to);
  if (!local) throw new Error(`cannot dial ${JSON.stringify(to)}: give exten@context, a sip: URI or an endpoint`);
  // /n: the Local channel must not optimise itself away, the caller's bridge holds its first half.
  return `Local/${local[1]}@${local[2]}/n`;
}

/**
 * Whether the event's text names `id` as a whole JSON string or the id part of a URI
 * (`channel:<id>`). A bare substring test is not enough: the server's own ids are
 * `<epoch>.<n>`, and the first call's `….1` is a prefix of `….10` to `….19`, `….100` …, so the
 * first calls of a suite took in other calls' events.
 */
export function mentions(raw: string, id: string): boolean {
  for (let at = raw.indexOf(id); at >= 0; at = raw.indexOf(id, at + 1)) {
    const before = raw[at - 1];
    if ((before === '"' || before === ':') && raw[at + id.length] === '"') return true;
  }
  return false;
}

function channelId(event: AriEvent): string | undefined {
  const channel = event.channel as { id?: unknown } | undefined;
  return typeof channel?.id === 'string' ? channel.id : undefined;
}

function channelState(event: AriEvent): string | undefined {
  const channel = event.channel as { state?: unknown } | undefined;
  return typeof channel?.state === 'string' ? channel.state : undefined;
}

/** Whether each `a.b.c` path of `match` has that value in the event (compared as text). */
function matches(event: AriEvent, match: Readonly<Record<string, string | number | boolean>>): boolean {
  return Object.entries(match).every(([path, expected]) => {
    let value: unknown = event;
    for (const key of path.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    return value !== undefined && String(value) === String(expected);
  });
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100) || 'caller';
}

function writeWav(path: string, samples: Int16Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  writeFileSync(path, Buffer.concat([buildPcm16MonoHeader(CALLER_RATE, data.length), data]));
}
