/**
 * Decides, per request, which fault (if any) the simulator injects: a scripted answer first,
 * then the rate limit, then one seeded draw that picks at most one fate (5xx, stored-then-500,
 * never answered), so the configured fractions are exact in expectation and exclusive.
 */
import { UsageError } from '../errors.js';
import { createPrng } from './prng.js';
import { SlidingWindowLimiter } from './slidingWindowLimiter.js';
import type { CounterBoard } from './counterBoard.js';
import type { FaultOptions, ScriptedResponse, ScriptPath } from './simulatorTypes.js';

/** The faults in force when none are configured. */
const NO_FAULTS: Readonly<FaultOptions> = Object.freeze({
  latencyMs: 0,
  jitterMs: 0,
  serverErrorRate: 0,
  storedThenErrorRate: 0,
  noAnswerRate: 0,
  rateLimitPerSecond: 0,
  retryAfterSeconds: 1,
  tokenFailureRate: 0,
  tokenLatencyMs: 0,
  script: [],
  forbiddenCustomers: [],
});

/** Number of 5xx answer variants (see serverErrorAnswer.ts). */
const SERVER_ERROR_VARIANTS = 5;

/** What to do with one API request. */
export interface ApiDecision {
  delayMs: number;
  fate: 'normal' | 'serverError' | 'storedThenError' | 'noAnswer' | 'rateLimited' | 'scripted';
  /** Which 5xx variant, when fate is serverError. */
  variant: number;
  scripted: ScriptedResponse | undefined;
}

/** What to do with one token request. */
export interface TokenDecision {
  delayMs: number;
  fate: 'normal' | 'tokenFailure' | 'scripted';
  scripted: ScriptedResponse | undefined;
}

const RATE_FIELDS = ['serverErrorRate', 'storedThenErrorRate', 'noAnswerRate', 'tokenFailureRate'] as const;
const NON_NEGATIVE_FIELDS = [
  'latencyMs',
  'jitterMs',
  'rateLimitPerSecond',
  'retryAfterSeconds',
  'tokenLatencyMs',
] as const;
const SCRIPT_PATHS: readonly ScriptPath[] = ['orders', 'accounts', 'login', 'token'];

/**
 * Merges `patch` over `base` and checks every value; throws UsageError SIMULATOR_FAULTS_INVALID
 * naming the field. Unknown fields are refused too, so a typo is not silently ignored.
 */
function mergeFaults(base: Readonly<FaultOptions>, patch: unknown): FaultOptions {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) invalid('faults', 'must be an object');
  const merged: FaultOptions = { ...base, script: [...base.script], forbiddenCustomers: [...base.forbiddenCustomers] };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if ((RATE_FIELDS as readonly string[]).includes(key)) {
      if (typeof value !== 'number' || !(value >= 0 && value <= 1)) invalid(key, 'must be a fraction between 0 and 1');
    } else if ((NON_NEGATIVE_FIELDS as readonly string[]).includes(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) invalid(key, 'must be a number >= 0');
    } else if (key === 'script') {
      merged.script = checkScript(value);
      continue;
    } else if (key === 'forbiddenCustomers') {
      if (!Array.isArray(value) || !value.every((id) => Number.isInteger(id)))
        invalid(key, 'must be an array of customer ids');
      merged.forbiddenCustomers = [...(value as number[])];
      continue;
    } else {
      invalid(key, 'is not a fault option');
    }
    (merged as unknown as Record<string, number>)[key] = value;
  }
  if (merged.serverErrorRate + merged.storedThenErrorRate + merged.noAnswerRate > 1) {
    invalid('serverErrorRate', 'serverErrorRate + storedThenErrorRate + noAnswerRate must not exceed 1');
  }
  return merged;
}

function checkScript(value: unknown): ScriptedResponse[] {
  if (!Array.isArray(value)) invalid('script', 'must be an array');
  return value.map((entry: unknown, index) => {
    const where = `script[${index}]`;
    if (typeof entry !== 'object' || entry === null) invalid(where, 'must be an object');
    const e = entry as Record<string, unknown>;
    if (!Number.isInteger(e.status) || (e.status as number) < 100 || (e.status as number) > 599) {
      invalid(`${where}.status`, 'must be an HTTP status (100-599)');
    }
    if (e.path !== undefined && !SCRIPT_PATHS.includes(e.path as ScriptPath)) {
      invalid(`${where}.path`, `must be one of ${SCRIPT_PATHS.join(', ')}`);
    }
    if (e.delayMs !== undefined && (typeof e.delayMs !== 'number' || !(e.delayMs >= 0)))
      invalid(`${where}.delayMs`, 'must be >= 0');
    if (e.headers !== undefined && (typeof e.headers !== 'object' || e.headers === null))
      invalid(`${where}.headers`, 'must be an object');
    return { ...(e as unknown as ScriptedResponse) };
  });
}

function invalid(field: string, problem: string): never {
  throw new UsageError('SIMULATOR_FAULTS_INVALID', `simulator fault option ${field} ${problem}`, {
    details: { field },
  });
}

/** The faults in force and the state behind them (PRNG, rate window, pending script). */
export class FaultPlan {
  #faults: FaultOptions;
  #limiter: SlidingWindowLimiter;
  #random: () => number;
  readonly #seed: number;
  readonly #counters: CounterBoard;

  constructor(initial: Partial<FaultOptions> | undefined, seed: number, counters: CounterBoard) {
    this.#faults = mergeFaults(NO_FAULTS, initial ?? {});
    this.#limiter = new SlidingWindowLimiter(this.#faults.rateLimitPerSecond);
    this.#seed = seed;
    this.#random = createPrng(seed);
    this.#counters = counters;
  }

  /** The faults in force (a copy). */
  get faults(): FaultOptions {
    return {
      ...this.#faults,
      script: [...this.#faults.script],
      forbiddenCustomers: [...this.#faults.forbiddenCustomers],
    };
  }

  /** Merges `patch` (see {@link mergeFaults}); a changed rate limit starts a fresh window. */
  set(patch: unknown): void {
    const next = mergeFaults(this.#faults, patch);
    if (next.rateLimitPerSecond !== this.#faults.rateLimitPerSecond)
      this.#limiter = new SlidingWindowLimiter(next.rateLimitPerSecond);
    this.#faults = next;
  }

  /** Restarts the PRNG from the seed and empties the rate window. */
  reset(): void {
    this.#random = createPrng(this.#seed);
    this.#limiter = new SlidingWindowLimiter(this.#faults.rateLimitPerSecond);
  }

  /** Decides the fate of one API request to `path` arriving at `now`. */
  decideApi(path: ScriptPath, now: number): ApiDecision {
    const f = this.#faults;
    let delayMs = f.latencyMs;
    if (f.jitterMs > 0) delayMs += this.#random() * f.jitterMs;
    if (delayMs > 0) this.#counters.fault('latency');

    const scripted = this.#takeScripted(path);
    if (scripted !== undefined) {
      this.#counters.fault('scripted');
      return { delayMs: scripted.delayMs ?? delayMs, fate: 'scripted', variant: 0, scripted };
    }
    if (!this.#limiter.tryAdmit(now)) {
      this.#counters.fault('rateLimited');
      return { delayMs, fate: 'rateLimited', variant: 0, scripted: undefined };
    }
    if (f.serverErrorRate + f.storedThenErrorRate + f.noAnswerRate === 0) {
      return { delayMs, fate: 'normal', variant: 0, scripted: undefined };
    }
    const draw = this.#random();
    if (draw < f.serverErrorRate) {
      this.#counters.fault('serverError');
      const variant = Math.floor(this.#random() * SERVER_ERROR_VARIANTS);
      return { delayMs, fate: 'serverError', variant, scripted: undefined };
    }
    if (draw < f.serverErrorRate + f.storedThenErrorRate) {
      this.#counters.fault('storedThenError');
      return { delayMs, fate: 'storedThenError', variant: 0, scripted: undefined };
    }
    if (draw < f.serverErrorRate + f.storedThenErrorRate + f.noAnswerRate) {
      this.#counters.fault('noAnswer');
      return { delayMs, fate: 'noAnswer', variant: 0, scripted: undefined };
    }
    return { delayMs, fate: 'normal', variant: 0, scripted: undefined };
  }

  /** Decides the fate of one token request. */
  decideToken(): TokenDecision {
    const f = this.#faults;
    const delayMs = f.tokenLatencyMs;
    if (delayMs > 0) this.#counters.fault('tokenLatency');
    const scripted = this.#takeScripted('token');
    if (scripted !== undefined) {
      this.#counters.fault('scripted');
      return { delayMs: scripted.delayMs ?? delayMs, fate: 'scripted', scripted };
    }
    if (f.tokenFailureRate > 0 && this.#random() < f.tokenFailureRate) {
      this.#counters.fault('tokenFailure');
      return { delayMs, fate: 'tokenFailure', scripted: undefined };
    }
    return { delayMs, fate: 'normal', scripted: undefined };
  }

  /** Removes and returns the first script entry for `path` (entries without a path match any API path). */
  #takeScripted(path: ScriptPath): ScriptedResponse | undefined {
    const script = this.#faults.script;
    if (script.length === 0) return undefined;
    const index = script.findIndex((entry) => (entry.path === undefined ? path !== 'token' : entry.path === path));
    if (index < 0) return undefined;
    return script.splice(index, 1)[0];
  }
}
