/**
 * A small seeded PRNG (mulberry32) so that fault fractions and jitter are reproducible
 * from a seed; Math.random cannot be seeded.
 */

/** Returns a function yielding uniform floats in [0, 1), determined by `seed`. */
export function createPrng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
