// Parameters that channels and bridges declare alike (recording limits and behaviour), declared once.

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
