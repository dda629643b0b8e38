// What a virtual caller does: where it dials and the steps of its call. Scenario files
// (scenario.ts) and the npm API (index.ts) both produce these.

/** Where and how the caller dials. */
export interface DialSpec {
  /**
   * `exten@context` (a Local channel into the dialplan), `sip:user@host` (a SIP call through
   * Patchbay's own stack, from `sipEndpoint`), or any ARI endpoint (`PJSIP/alice`, `Local/…`).
   */
  readonly to: string;
  /** `"Name" <number>` or a number. */
  readonly callerId?: string;
  /** Channel variables set on the caller's channel before it dials. */
  readonly variables?: Readonly<Record<string, string>>;
  /** SIP headers added to the INVITE (SIP dialing). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The PJSIP endpoint a `sip:` URI is dialed from. */
  readonly sipEndpoint?: string;
  /** How long the call may ring before the caller gives up (default 10 s). */
  readonly answerTimeoutMs?: number;
}

/** One `expect_audio`: exactly one of prompt, tone, silence, speech. */
export type AudioExpectation =
  | { readonly prompt: string; readonly threshold?: number }
  | { readonly tone: number; readonly minMs?: number }
  | { readonly silence: number }
  | { readonly speech: number };

export type Step =
  | ({ readonly kind: 'expect_audio'; readonly timeoutMs?: number } & AudioExpectation)
  | { readonly kind: 'send_dtmf'; readonly digits: string }
  | { readonly kind: 'play'; readonly file: string }
  | { readonly kind: 'expect_event'; readonly event: string; readonly match?: Readonly<Record<string, string | number | boolean>>; readonly timeoutMs?: number }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'hangup' }
  | { readonly kind: 'expect_hangup'; readonly cause?: number; readonly timeoutMs?: number }
  | { readonly kind: 'record'; readonly file: string };

export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

/** A step in words, for progress lines and failure messages. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'expect_audio':
      if ('prompt' in step) return `expect_audio prompt ${step.prompt}`;
      if ('tone' in step) return `expect_audio tone ${step.tone} Hz`;
      if ('silence' in step) return `expect_audio silence ${step.silence} ms`;
      return `expect_audio speech ${step.speech} ms`;
    case 'send_dtmf':
      return `send_dtmf ${step.digits}`;
    case 'play':
      return `play ${step.file}`;
    case 'expect_event':
      return `expect_event ${step.event}${step.match ? ` ${JSON.stringify(step.match)}` : ''}`;
    case 'wait':
      return `wait ${step.ms} ms`;
    case 'hangup':
      return 'hangup';
    case 'expect_hangup':
      return `expect_hangup${step.cause !== undefined ? ` cause ${step.cause}` : ''}`;
    case 'record':
      return `record ${step.file}`;
  }
}

/** How one step went. */
export interface StepResult {
  readonly step: string;
  readonly passed: boolean;
  /** From the step's start to its end. */
  readonly ms: number;
  readonly detail?: string;
}

/** How one call went. */
export interface CallResult {
  readonly name: string;
  readonly passed: boolean;
  /** Why it failed: the step and what was missing. */
  readonly error?: string;
  readonly steps: readonly StepResult[];
  /** Dial to answer. */
  readonly answerMs?: number;
  /** Answer to the first audio heard. */
  readonly firstAudioMs?: number;
  /** End of each of the caller's utterances (`play`) to the first audio of the answer. */
  readonly turnLatenciesMs: readonly number[];
  readonly durationMs: number;
  /** What the caller heard (WAV), kept for `record` and on failure. */
  readonly recording?: string;
  /** The call's ARI events (JSON lines), kept on failure. */
  readonly transcript?: string;
}
