/** Probes per key and slice. */
const PROBES = 8;
/** Bits per key a slice is sized for: with 8 probes under one false "seen" in 10^8 lookups per slice. */
const BITS_PER_KEY = 96;
/** Keys the first slice is sized for; each next slice holds twice as many. */
const FIRST_SLICE_KEYS = 8192;

/**
 * The keys of groups already closed, in a bounded number of bits (a scalable Bloom filter): `has` is
 * never wrong about a key that was added, and rarely says yes for one that was not (the file is then
 * read the safe way, through the spill files, slower but exact). Memory follows the keys added, in
 * slices of doubling size, up to `maxBits`; past it the last slice keeps filling, and says yes more
 * often, never no wrongly. Slices start small because a large buffer held before the rows are read
 * raised the peak memory of the read that followed by more than its own size (V8's heap limits
 * count external memory).
 */
export class ClosedKeys {
  readonly #slices: Slice[] = [];
  /** The slice keys are added to: the newest. */
  #last: Slice;
  readonly #maxBits: number;
  #keys = 0;
  #bits = 0;

  constructor(maxBits: number) {
    this.#maxBits = maxBits;
    this.#last = this.#push(sliceBits(FIRST_SLICE_KEYS), FIRST_SLICE_KEYS);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#bits / 8;
  }

  add(key: string): void {
    hashes(key);
    this.addHashes(pair[0], pair[1]);
  }

  /** add() with the key's hashes (keyHashes) already at hand. */
  addHashes(h1: number, h2: number): void {
    if (this.#keys >= this.#last.capacity) this.#grow();
    const slice = this.#last;
    this.#keys++;
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & slice.mask;
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- bit is masked below the slice's words.length * 32
      slice.words[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  has(key: string): boolean {
    hashes(key);
    return this.hasHashes(pair[0], pair[1]);
  }

  /** has() with the key's hashes (keyHashes) already at hand. */
  hasHashes(h1: number, h2: number): boolean {
    for (const slice of this.#slices) {
      let all = true;
      for (let i = 0; i < PROBES && all; i++) {
        const bit = (h1 + Math.imul(i, h2)) & slice.mask;
        // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- bit is masked below the slice's words.length * 32
        all = (slice.words[bit >>> 5]! & (1 << (bit & 31))) !== 0;
      }
      if (all) return true;
    }
    return false;
  }

  /** Adds a slice for twice the keys so far, unless that would pass maxBits (the last one keeps filling). */
  #grow(): void {
    const bits = sliceBits(this.#keys);
    if (this.#bits + bits <= this.#maxBits) this.#last = this.#push(bits, this.#keys);
  }

  /** A new slice of `bits` for `keys` more keys. */
  #push(bits: number, keys: number): Slice {
    const slice = { words: new Uint32Array(bits / 32), mask: bits - 1, capacity: this.#keys + keys };
    this.#slices.push(slice);
    this.#bits += bits;
    return slice;
  }
}

interface Slice {
  words: Uint32Array;
  mask: number;
  capacity: number;
}

/** The bits of a slice for `keys` keys: a power of two, 1024 at least. */
function sliceBits(keys: number): number {
  let bits = 1024;
  while (bits < keys * BITS_PER_KEY) bits *= 2;
  return bits;
}

const pair: [number, number] = [0, 0];

/**
 * One number for a key from its two hashes (53 bits, exact in a double): what the shape scan and the stream group
 * rows by. Two keys that share it are grouped as one, which costs memory, never correctness (ShapeKey).
 */
export function shapeHash(h1: number, h2: number): number {
  return h1 * 0x200000 + (h2 >>> 11);
}

/** shapeHash of a key's text. */
export function shapeHashOf(key: string): number {
  hashes(key);
  return shapeHash(pair[0], pair[1]);
}

/** The two hashes of a key (the array is reused: read both before the next call). */
export function keyHashes(key: string): readonly [number, number] {
  return hashes(key);
}

/** Where both hashes start (FNV-1a's offset basis, and the multiply-rotate's seed). */
export const HASH_SEEDS = [0x811c9dc5, 0x9e3779b9] as const;

/** One character (or byte) into the first hash (FNV-1a). */
export function hashStep1(a: number, c: number): number {
  return Math.imul(a ^ c, 0x01000193);
}

/** One character (or byte) into the second hash (multiply-rotate). */
export function hashStep2(b: number, c: number): number {
  return Math.imul((b << 5) | (b >>> 27), 0x85ebca6b) ^ c;
}

/** Ends both hashes into `into` (the second mixed and made odd): what keyHashes and the shape scan's byte keys share. */
export function finishHashes(a: number, b: number, into: [number, number]): [number, number] {
  b ^= b >>> 16;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 13;
  into[0] = a >>> 0;
  into[1] = (b | 1) >>> 0;
  return into;
}

/** Two 32-bit hashes of the key in one pass (FNV-1a and a multiply-rotate), the second odd. */
function hashes(key: string): [number, number] {
  let a: number = HASH_SEEDS[0];
  let b: number = HASH_SEEDS[1];
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = hashStep1(a, c);
    b = hashStep2(b, c);
  }
  return finishHashes(a, b, pair);
}
