import { defined } from '../errors.js';

/** A group closed at its last row came back: the shape scan and this read met other rows (the file changed between them). */
export class GroupCameBackError extends Error {
  constructor() {
    super('StreamGroups: a group closed at its last row came back; the shape scan and the read disagree');
  }
}

/**
 * The read of a file the shape scan passed (ShapeVerdict `stream`): units are held by their shape
 * key until `window` units have passed without that key, then handed out together to be assembled.
 * The scan proved that such a key never comes back, so each group handed out is whole; memory holds
 * the open groups only (the scan also capped their rows). Units without a key stand alone and wait
 * their turn in the same queue, so items leave in the order of each group's last row.
 *
 * With the scan's GroupEnds, a group leaves at its last row instead, and a unit without a key at once
 * (the same order, without holding a window of units alive: they were most of what every young-generation
 * collection copied). The key stays in the window as a tombstone: if a group closed so comes back within
 * it, the scan and the read disagree about the rows, and the read stops rather than hand out half an order.
 */
export class StreamGroups<U> {
  readonly #window: number;
  /** Open groups by key; `units` undefined: closed at its last row, a tombstone until the window passes it. */
  readonly #open = new Map<number, { last: number; units: U[] | undefined }>();
  /** One entry per unit, oldest first: its key (shapeHash), or -1 and the unit itself when it has none (undefined once handed out). */
  readonly #keys: Float64Array;
  readonly #alone: (U | undefined)[];
  readonly #at: Int32Array;
  /** What the last add() closed, oldest first (one list, reused). */
  readonly #closed: U[][] = [];
  #head = 0;
  #size = 0;
  #next = 0;

  constructor(window: number) {
    this.#window = window;
    this.#keys = new Float64Array(window + 2).fill(-1);
    this.#alone = new Array<U | undefined>(window + 2);
    this.#at = new Int32Array(window + 2);
  }

  /**
   * The next unit of the file with its shape key (shapeHash, as the scan has it). Returns the groups this closes,
   * oldest first, in a list valid until the next call.
   */
  add(unit: U, key: number | undefined): readonly U[][] {
    return this.#add(unit, key, false);
  }

  /**
   * As add(), for a unit the scan found the last row of its group (a unit without a key: the scan's ends are in
   * use): its group leaves now. Two methods, not a flag: called once per row.
   */
  addLast(unit: U, key: number | undefined): readonly U[][] {
    return this.#add(unit, key, true);
  }

  #add(unit: U, key: number | undefined, last: boolean): readonly U[][] {
    const index = this.#next++;
    const closed = this.#closed;
    closed.length = 0;
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- #head stays below the ring's length
    if (this.#size > 0 && index - this.#at[this.#head]! > this.#window) this.#shift();
    const slot = (this.#head + this.#size) % this.#keys.length;
    this.#at[slot] = index;
    this.#size++;
    if (key === undefined) {
      this.#keys[slot] = -1;
      if (last) closed.push([unit]);
      else this.#alone[slot] = unit;
      return closed;
    }
    this.#keys[slot] = key;
    let group = this.#open.get(key);
    let units: U[];
    if (group === undefined) this.#open.set(key, (group = { last: index, units: (units = [unit]) }));
    else {
      if (group.units === undefined) throw new GroupCameBackError();
      group.last = index;
      (units = group.units).push(unit);
    }
    if (last) {
      closed.push(units);
      group.units = undefined;
    }
    return closed;
  }

  /** The groups still open at the end of the file, in the same order. */
  *finish(): Generator<U[]> {
    while (this.#size > 0) {
      this.#closed.length = 0;
      this.#shift();
      yield* this.#closed;
    }
  }

  /** Takes the oldest entry; adds to #closed what it closes (a lone unit, or a group last seen there). */
  #shift(): void {
    const slot = this.#head;
    this.#head = (slot + 1) % this.#keys.length;
    this.#size--;
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- slot < the ring's length
    const key = this.#keys[slot]!;
    if (key === -1) {
      const unit = this.#alone[slot];
      this.#alone[slot] = undefined;
      if (unit !== undefined) this.#closed.push([unit]); // undefined: handed out when it came
      return;
    }
    this.#keys[slot] = -1;
    // Every slot of a key is older than the group's last one, which alone closes it: the group is still open.
    const group = defined(this.#open.get(key), 'the open group of a key in the window');
    if (group.last !== this.#at[slot]) return; // seen again since: still open
    this.#open.delete(key);
    if (group.units !== undefined) this.#closed.push(group.units);
  }
}

/**
 * Which keyed data rows of a file are the last of their group, as the shape scan found them: one bit per
 * row with a shape key, counted from the first data row (the header and a `sep=` line before it left out).
 */
export class GroupEnds {
  #bits = new Uint8Array(4096);

  /** Row `n` (the n-th data row with a key, from 0) is the last of its group. */
  add(n: number): void {
    const byte = n >>> 3;
    if (byte >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- byte < length, grown above
    this.#bits[byte]! |= 1 << (n & 7);
  }

  has(n: number): boolean {
    return ((this.#bits[n >>> 3] ?? 0) & (1 << (n & 7))) !== 0;
  }
}
