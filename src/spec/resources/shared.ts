// Parameters and errors that channels and bridges declare alike (recording limits and behaviour, their
// variables), declared once.

/** The recording options after `name`/`format` (and the bridge's `recorder_format`). */
export const recordingOptionParams = [
  {
    name: 'maxDurationSeconds',
    description: 'Longest recording allowed, in seconds; 0 means no limit.',
    in: 'query',
    dataType: 'int',
    defaultValue: 0,
    range: { min: 0 },
    aliases: ['max_duration_seconds'],
  },
  {
    name: 'maxSilenceSeconds',
    description: 'Longest silence allowed, in seconds; 0 means no limit.',
    in: 'query',
    dataType: 'int',
    defaultValue: 0,
    range: { min: 0 },
    aliases: ['max_silence_seconds'],
  },
  {
    name: 'ifExists',
    description: 'What to do when a recording of that name exists.',
    in: 'query',
    dataType: 'string',
    defaultValue: 'fail',
    allowedValues: ['fail', 'overwrite', 'append'],
    caseInsensitive: true,
    aliases: ['if_exists'],
  },
  { name: 'beep', description: 'Whether to play a beep before recording.', in: 'query', dataType: 'boolean', defaultValue: false },
  {
    name: 'terminateOn',
    description: 'DTMF digit that ends the recording.',
    in: 'query',
    dataType: 'string',
    defaultValue: 'none',
    allowedValues: ['none', 'any', '*', '#'],
    caseInsensitive: true,
    aliases: ['terminate_on'],
  },
] as const;

/** The value a setChannelVar / setBridgeVar sets. */
export const variableValueParam = { name: 'value', description: 'Value to set; the variable is cleared when absent.', in: 'query', dataType: 'string' } as const;

/** The body of setChannelVars / setBridgeVars. */
export const variablesSetBody = {
  name: 'variables',
  description: 'Body object "variables": names mapped to values (or to {value, report_events}).',
  in: 'body',
  dataType: 'containers',
  required: true,
} as const;

export const noVariableName = { code: 400, reason: 'No variable name given.' } as const;
export const noVariableNames = { code: 400, reason: 'No variable names given.' } as const;
export const noVariables = { code: 400, reason: 'No variables given.' } as const;
