// Signal level measures over a block of samples.

/** Mean of the squared samples: the signal's power. */
export function meanSquare(samples: Int16Array, start = 0, end = samples.length): number {
  if (end <= start) return 0;
  let total = 0;
  for (let i = start; i < end; i++) total += samples[i] * samples[i];
  return total / (end - start);
}

export function rms(samples: Int16Array, start = 0, end = samples.length): number {
  return Math.sqrt(meanSquare(samples, start, end));
}

/** RMS relative to 16-bit full scale; -Infinity for digital silence. */
export function dbfs(samples: Int16Array, start = 0, end = samples.length): number {
  return 20 * Math.log10(rms(samples, start, end) / 32768);
}

/**
 * Mean absolute sample value: the measure Asterisk's silence detection
 * compares with `silencethreshold` (dsp.conf, default 256), so thresholds
 * taken from Asterisk configurations mean the same thing here.
 */
export function averageMagnitude(samples: Int16Array, start = 0, end = samples.length): number {
  if (end <= start) return 0;
  let total = 0;
  for (let i = start; i < end; i++) {
    const sample = samples[i];
    total += sample < 0 ? -sample : sample;
  }
  return total / (end - start);
}
