/** A malformed dialplan file; the message reads `file:line: reason`, like a compiler's. */
export class DialplanSyntaxError extends Error {
  readonly file: string;
  readonly line: number;
  readonly reason: string;

  constructor(file: string, line: number, reason: string) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'DialplanSyntaxError';
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** Where a piece of dialplan text came from. */
export interface SourceLine {
  readonly file: string;
  readonly line: number;
}

export function syntaxError(at: SourceLine, reason: string): DialplanSyntaxError {
  return new DialplanSyntaxError(at.file, at.line, reason);
}
