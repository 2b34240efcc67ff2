import { defined } from '../errors.js';

/**
 * The read of a file the shape scan passed (ShapeVerdict `stream`): units are held by their shape
 * key until `window` units have passed without that key, then handed out together to be assembled.
 * The scan proved that such a key never comes back, so each group handed out is whole; memory holds
 * the open groups only (the scan also capped their rows). Units without a key stand alone and wait
 * their turn in the same queue, so items leave in the order of each group's last row.
 */
export class StreamGroups<U> {
  readonly #window: number;
  readonly #open = new Map<string, { last: number; units: U[] }>();
  /** One entry per unit, oldest first: its key, or the unit itself when it has none. */
  readonly #keys: (string | undefined)[];
  readonly #alone: (U | undefined)[];
  readonly #at: Int32Array;
  #head = 0;
  #size = 0;
  #next = 0;

  constructor(window: number) {
    this.#window = window;
    this.#keys = new Array<string | undefined>(window + 2);
    this.#alone = new Array<U | undefined>(window + 2);
    this.#at = new Int32Array(window + 2);
  }

  /** The next unit of the file with its shape key; returns the units of a group this closes, if any. */
  add(unit: U, key: string | undefined): U[] | undefined {
    const index = this.#next++;
    let closed: U[] | undefined;
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- #head stays below the ring's length
    if (this.#size > 0 && index - this.#at[this.#head]! > this.#window) closed = this.#shift();
    const slot = (this.#head + this.#size) % this.#keys.length;
    this.#at[slot] = index;
    this.#size++;
    if (key === undefined) {
      this.#keys[slot] = undefined;
      this.#alone[slot] = unit;
      return closed;
    }
    this.#keys[slot] = key;
    const group = this.#open.get(key);
    if (group === undefined) this.#open.set(key, { last: index, units: [unit] });
    else {
      group.last = index;
      group.units.push(unit);
    }
    return closed;
  }

  /** The groups still open at the end of the file, in the same order. */
  *finish(): Generator<U[]> {
    while (this.#size > 0) {
      const closed = this.#shift();
      if (closed !== undefined) yield closed;
    }
  }

  /** Takes the oldest entry; the units it closes (a lone unit, or a group last seen there). */
  #shift(): U[] | undefined {
    const slot = this.#head;
    this.#head = (slot + 1) % this.#keys.length;
    this.#size--;
    const key = this.#keys[slot];
    if (key === undefined) {
      const unit = defined(this.#alone[slot], 'the unit of a slot without a key');
      this.#alone[slot] = undefined;
      return [unit];
    }
    this.#keys[slot] = undefined;
    // Every slot of a key is older than the group's last one, which alone closes it: the group is still open.
    const group = defined(this.#open.get(key), 'the open group of a key in the window');
    if (group.last !== this.#at[slot]) return undefined; // seen again since: still open
    this.#open.delete(key);
    return group.units;
  }
}
