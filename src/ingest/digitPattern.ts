/**
 * A regular expression over digits, as libphonenumber's metadata writes them (digits, `\d`, `[...]`
 * with ranges, `(...)` and `(?:...)`, `|`, `?`, `{n}`, `{n,m}`), compiled to a small automaton that
 * answers, for every digit string of a given length after a given prefix at once, whether all of
 * them match, none does, or some do (src/ingest/phoneVerdicts.ts). Anything else in a pattern (an
 * anchor, a look-ahead) is refused with UnsupportedPattern, and the caller asks libphonenumber instead.
 */

/** Thrown for a pattern this automaton does not model. */
export class UnsupportedPattern extends Error {}

/** How a set of digit strings meets a pattern: none matches, all do, or some. */
export const NONE = 0;
export const ALL = 1;
export const SOME = 2;
export type Coverage = typeof NONE | typeof ALL | typeof SOME;

type Ast =
  | { kind: 'digits'; mask: number }
  | { kind: 'seq'; items: Ast[] }
  | { kind: 'alt'; items: Ast[] }
  | { kind: 'repeat'; item: Ast; min: number; max: number };

const ANY_DIGIT = 0x3ff;

/** The pattern's syntax tree, or UnsupportedPattern. Runs once per pattern (phoneVerdicts caches its plans). */
function parse(pattern: string): Ast {
  return new PatternParser(pattern).whole();
}

/** A recursive-descent parser over one pattern; `#at` is where it reads next. */
class PatternParser {
  readonly #pattern: string;
  #at = 0;

  constructor(pattern: string) {
    this.#pattern = pattern;
  }

  /** The whole pattern: alternatives to its very end. */
  whole(): Ast {
    const ast = this.#alternatives();
    if (this.#at !== this.#pattern.length) this.#fail();
    return ast;
  }

  #fail(): never {
    throw new UnsupportedPattern(`unsupported pattern ${this.#pattern} at ${this.#at}`);
  }

  /** A decimal number, as in `{n,m}`. */
  #number(): number {
    const pattern = this.#pattern;
    const from = this.#at;
    while (isDigit(pattern[this.#at])) this.#at++;
    if (this.#at === from) this.#fail();
    return Number(pattern.slice(from, this.#at));
  }

  /** Sequences separated by `|`. */
  #alternatives(): Ast {
    const first = this.#sequence();
    const items = [first];
    while (this.#pattern[this.#at] === '|') {
      this.#at++;
      items.push(this.#sequence());
    }
    return items.length === 1 ? first : { kind: 'alt', items };
  }

  /** Atoms, each with its quantifiers, up to a `|`, a `)` or the end. */
  #sequence(): Ast {
    const pattern = this.#pattern;
    const items: Ast[] = [];
    while (this.#at < pattern.length && pattern[this.#at] !== '|' && pattern[this.#at] !== ')') {
      items.push(this.#quantified(this.#atom()));
    }
    return { kind: 'seq', items };
  }

  /** `item` under the quantifiers that follow it (`?`, `{n}`, `{n,m}`), innermost first. */
  #quantified(atom: Ast): Ast {
    const pattern = this.#pattern;
    let item = atom;
    for (;;) {
      if (pattern[this.#at] === '?') {
        this.#at++;
        item = { kind: 'repeat', item, min: 0, max: 1 };
      } else if (pattern[this.#at] === '{') {
        this.#at++;
        const min = this.#number();
        let max = min;
        if (pattern[this.#at] === ',') {
          this.#at++;
          max = pattern[this.#at] === '}' ? this.#fail() : this.#number();
        }
        if (pattern[this.#at] !== '}' || max < min) this.#fail();
        this.#at++;
        item = { kind: 'repeat', item, min, max };
      } else return item;
    }
  }

  /** A digit, `\d`, a `[...]` class or a group. */
  #atom(): Ast {
    const pattern = this.#pattern;
    const c = pattern[this.#at];
    if (isDigit(c)) {
      this.#at++;
      return { kind: 'digits', mask: 1 << Number(c) };
    }
    if (c === '\\') {
      if (pattern[this.#at + 1] !== 'd') this.#fail();
      this.#at += 2;
      return { kind: 'digits', mask: ANY_DIGIT };
    }
    if (c === '[') return this.#digitClass();
    if (c === '(') {
      this.#at++;
      if (pattern.startsWith('?:', this.#at)) this.#at += 2;
      else if (pattern[this.#at] === '?') this.#fail();
      const inner = this.#alternatives();
      if (pattern[this.#at] !== ')') this.#fail();
      this.#at++;
      return inner;
    }
    return this.#fail();
  }

  /** `[...]`: digits and digit ranges, as one mask. */
  #digitClass(): Ast {
    const pattern = this.#pattern;
    this.#at++;
    let mask = 0;
    while (pattern[this.#at] !== ']') {
      const from = pattern[this.#at];
      if (!isDigit(from)) this.#fail();
      this.#at++;
      let to = from;
      if (pattern[this.#at] === '-') {
        this.#at++;
        const end = pattern[this.#at];
        if (!isDigit(end) || end < from) this.#fail();
        to = end;
        this.#at++;
      }
      for (let d = Number(from); d <= Number(to); d++) mask |= 1 << d;
    }
    this.#at++;
    return { kind: 'digits', mask };
  }
}

/** True for a character `0`-`9` (false past the pattern's end). */
function isDigit(c: string | undefined): c is string {
  return c !== undefined && c >= '0' && c <= '9';
}

/**
 * A state of the automaton: the digits it reads and the state they lead to (none: it reads no digit), and
 * its empty moves. `id` orders a set of states (the memo's key).
 */
interface State {
  readonly id: number;
  read?: { mask: number; to: State };
  readonly empty: State[];
}

/**
 * A compiled pattern: a nondeterministic automaton over the ten digits, walked as sets of states.
 * `coverage` answers for all strings that start with a prefix and have a given length.
 */
export class DigitPattern {
  #states = 0;
  readonly #accept: State;
  readonly #start: readonly State[];
  readonly #memo = new Map<string, Coverage>();

  constructor(pattern: string) {
    const ast = parse(pattern);
    const [start, end] = this.#build(ast);
    this.#accept = end;
    this.#start = this.#closure([start]);
  }

  /**
   * How the strings `prefix` + any `rest` digits meet the pattern: matched entirely (`^(?:p)$`), or
   * with `prefixMatch` at their start (`^(?:p)`, as libphonenumber tests leading digits and national prefixes).
   */
  coverage(prefix: string, rest: number, prefixMatch: boolean): Coverage {
    let states = this.#start;
    for (let i = 0; i < prefix.length; i++) {
      if (prefixMatch && states.includes(this.#accept)) return ALL;
      states = this.#step(states, prefix.charCodeAt(i) - 48);
    }
    return this.#cover(states, rest, prefixMatch);
  }

  #cover(states: readonly State[], rest: number, prefixMatch: boolean): Coverage {
    const accepting = states.includes(this.#accept);
    if (prefixMatch && accepting) return ALL;
    if (rest === 0) return accepting ? ALL : NONE;
    if (states.length === 0) return NONE;
    const key = `${prefixMatch ? 'p' : 'e'}${rest}:${states.map((state) => state.id).join(',')}`;
    const known = this.#memo.get(key);
    if (known !== undefined) return known;
    let result = this.#cover(this.#step(states, 0), rest - 1, prefixMatch);
    for (let d = 1; d <= 9 && result !== SOME; d++)
      if (this.#cover(this.#step(states, d), rest - 1, prefixMatch) !== result) result = SOME;
    this.#memo.set(key, result);
    return result;
  }

  #step(states: readonly State[], digit: number): State[] {
    const bit = 1 << digit;
    const next: State[] = [];
    for (const { read } of states) if (read !== undefined && (read.mask & bit) !== 0) next.push(read.to);
    return this.#closure(next);
  }

  /** The states reachable by empty moves, sorted by id (a set's key). */
  #closure(states: readonly State[]): State[] {
    const seen = new Set<State>();
    const stack = [...states];
    for (let state = stack.pop(); state !== undefined; state = stack.pop()) {
      if (seen.has(state)) continue;
      seen.add(state);
      for (const to of state.empty) stack.push(to);
    }
    return [...seen].sort((a, b) => a.id - b.id);
  }

  #state(): State {
    return { id: this.#states++, empty: [] };
  }

  /** Thompson's construction: [start, end] of the fragment for `ast`. */
  #build(ast: Ast): [State, State] {
    switch (ast.kind) {
      case 'digits': {
        const start = this.#state();
        const end = this.#state();
        start.read = { mask: ast.mask, to: end };
        return [start, end];
      }
      case 'seq': {
        const start = this.#state();
        let end = start;
        for (const item of ast.items) {
          const [s, e] = this.#build(item);
          end.empty.push(s);
          end = e;
        }
        return [start, end];
      }
      case 'alt': {
        const start = this.#state();
        const end = this.#state();
        for (const item of ast.items) {
          const [s, e] = this.#build(item);
          start.empty.push(s);
          e.empty.push(end);
        }
        return [start, end];
      }
      case 'repeat': {
        const start = this.#state();
        let end = start;
        for (let i = 0; i < ast.max; i++) {
          const [s, e] = this.#build(ast.item);
          end.empty.push(s);
          if (i >= ast.min) end.empty.push(e); // an optional copy may be left out...
          end = e;
        }
        return [start, end];
      }
    }
  }
}
