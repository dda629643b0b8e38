// The names of extension states and of their changes, apart from the code that computes them
// (extension-states.ts), so that the technology contract can name them without importing it.

export const EXTENSION_STATES = ['UNKNOWN', 'NOT_INUSE', 'INUSE', 'BUSY', 'INVALID', 'UNAVAILABLE', 'RINGING', 'RINGINUSE', 'HOLDINUSE', 'ONHOLD'] as const;
export type ExtensionState = (typeof EXTENSION_STATES)[number];

export interface ExtensionStateChange {
  readonly context: string;
  readonly exten: string;
  readonly hint: string;
  readonly state: ExtensionState;
  readonly previous: ExtensionState;
}
