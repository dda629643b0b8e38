// One extension of a loaded context: its steps by priority and label, and how it matches a call.
import type { ParsedExtension } from './parsed.ts';
import {
  compareExtensions,
  compileExtension,
  ExtensionPatternError,
  matchDialed,
  type ExtensionPattern,
  type MatchMode,
  type MatchOutcome,
} from './pattern.ts';

/** One `exten =>` line, ready to run. */
export interface DialplanStep {
  /** The context defining the step, which differs from the one searched when found through an include. */
  readonly context: string;
  /** The extension as defined: a name or a `_` pattern, not the dialed digits. */
  readonly extension: string;
  readonly priority: number;
  readonly label?: string;
  readonly app: string;
  /** Unsubstituted: `${...}` is expanded when the step runs. */
  readonly appData: string;
  readonly file: string;
  readonly line: number;
}

export class DialplanExtension {
  readonly name: string;
  readonly callerId?: string;
  readonly hint?: string;
  private readonly pattern: ExtensionPattern;
  private readonly callerPattern?: ExtensionPattern;
  private readonly steps = new Map<number, DialplanStep>();
  private readonly labels = new Map<string, number>();

  constructor(context: string, file: string, parsed: ParsedExtension) {
    this.name = parsed.name;
    this.pattern = compileExtension(parsed.name);
    if (parsed.callerId !== undefined) {
      this.callerId = parsed.callerId;
      this.callerPattern = compileExtension(parsed.callerId);
    }
    if (parsed.hint !== undefined) this.hint = parsed.hint;
    for (const step of parsed.steps) {
      this.steps.set(step.priority, {
        context,
        extension: parsed.name,
        priority: step.priority,
        ...(step.label !== undefined && { label: step.label }),
        app: step.app,
        appData: step.appData,
        file: step.file ?? file,
        line: step.line,
      });
      if (step.label !== undefined) this.labels.set(step.label, step.priority);
    }
  }

  get isPattern(): boolean {
    return this.pattern.elements !== undefined;
  }

  step(priority: number): DialplanStep | undefined {
    return this.steps.get(priority);
  }

  priorityOf(label: string): number | undefined {
    return this.labels.get(label);
  }

  /**
   * `dialed` must already be without `-` separators. A dialed string that is itself a pattern
   * matches an equivalent pattern, so `_X.` can be addressed by name.
   */
  match(dialed: string, mode: MatchMode): MatchOutcome {
    if (mode === 'exact' && this.isPattern && dialed.startsWith('_') && this.isSamePattern(dialed)) return 'full';
    return matchDialed(this.pattern, dialed, mode);
  }

  /** Extensions with a caller ID only apply to callers matching it; an absent caller ID matches none. */
  acceptsCaller(callerId: string | undefined): boolean {
    if (!this.callerPattern) return true;
    if (!callerId) return false;
    return matchDialed(this.callerPattern, callerId, 'exact') !== 'none';
  }

  /** Asterisk's order within a context, which is the order extensions are tried in. */
  static compare(a: DialplanExtension, b: DialplanExtension): number {
    const byName = compareExtensions(a.pattern, b.pattern);
    if (byName !== 0) return byName;
    if (!a.callerPattern || !b.callerPattern) {
      // The caller-specific variant of an extension is tried before the general one.
      return (a.callerPattern ? -1 : 0) + (b.callerPattern ? 1 : 0);
    }
    return compareExtensions(a.callerPattern, b.callerPattern);
  }

  private isSamePattern(dialed: string): boolean {
    try {
      return compareExtensions(this.pattern, compileExtension(dialed)) === 0;
    } catch (error) {
      if (error instanceof ExtensionPatternError) return false;
      throw error;
    }
  }
}
