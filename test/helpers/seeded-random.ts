// A small deterministic generator (mulberry32) for the seeded fuzz tests and sweeps: the same seed
// gives the same cases, so a failure names a seed that reproduces it.

/** Numbers in [0, 1), as Math.random gives them. */
export type SeededRandom = () => number;

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
