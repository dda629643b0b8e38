// The dialplan as read from a file, before it is indexed for lookups.

export interface ParsedStep {
  readonly priority: number;
  readonly label?: string;
  readonly app: string;
  /** Raw argument text between the parentheses; substitution happens when the step runs. */
  readonly appData: string;
  readonly line: number;
  /** The `#include`d file the step was read from; absent for the main file. */
  readonly file?: string;
}

export interface ParsedExtension {
  /** Without `-` separators; patterns keep their leading `_`. */
  readonly name: string;
  /** From `exten => name/callerid,...`: the extension only applies to matching callers. */
  readonly callerId?: string;
  /** Ordered by priority. */
  readonly steps: readonly ParsedStep[];
  /** Device state expression from `exten => name,hint,...`. */
  readonly hint?: string;
  readonly line: number;
}

export interface ParsedInclude {
  readonly context: string;
  /** Raw time restriction (`times,weekdays,mdays,months[,timezone]`) as written after the name. */
  readonly timing?: string;
  readonly line: number;
}

export interface ParsedSwitch {
  readonly kind: 'switch' | 'lswitch' | 'eswitch';
  readonly module: string;
  readonly data: string;
  readonly line: number;
}

export interface ParsedContext {
  readonly name: string;
  readonly line: number;
  readonly extensions: readonly ParsedExtension[];
  readonly includes: readonly ParsedInclude[];
  readonly ignorePatterns: readonly string[];
  /** Recorded for completeness; Patchbay has no switch modules to consult. */
  readonly switches: readonly ParsedSwitch[];
}

export interface ParsedDialplan {
  readonly file: string;
  readonly contexts: readonly ParsedContext[];
  /** From `[globals]`, in definition order. */
  readonly globals: ReadonlyMap<string, string>;
  /** From `[general]` (`autofallthrough`, `clearglobalvars`, ...), uninterpreted. */
  readonly general: ReadonlyMap<string, string>;
  /** Lines skipped with a reason (`#exec` refused), as `file:line: text`. */
  readonly warnings?: readonly string[];
}
