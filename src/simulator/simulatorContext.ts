/**
 * The state one simulator's handlers share. Built once by startSimulator and passed to each
 * handler, so there is no module-level state and two simulators in one process stay apart.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { AccountBook } from './accountBook.js';
import type { Answer } from './answer.js';
import type { AnswerProfile } from './answerProfile.js';
import type { CounterBoard } from './counterBoard.js';
import type { FaultPlan } from './faultPlan.js';
import type { OrderBook } from './orderBook.js';
import type { ApiName, ClientCredentials } from './simulatorTypes.js';
import type { TokenRegistry } from './tokenRegistry.js';

/** Everything a request handler needs. */
export interface SimulatorContext {
  /** Filled in once the server listens. */
  url: string;
  readonly credentials: Readonly<Record<ApiName, ClientCredentials>>;
  readonly tokenLifetimeSeconds: number;
  readonly loginCodeLifetimeMs: number;
  readonly customers: ReadonlySet<number>;
  readonly products: ReadonlySet<number>;
  readonly clock: () => number;
  readonly logger: Logger;
  readonly counters: CounterBoard;
  readonly faults: FaultPlan;
  readonly tokens: TokenRegistry;
  readonly orders: OrderBook;
  readonly accounts: AccountBook;
  /** How answers look where the spec says "not shown". */
  readonly profile: Readonly<AnswerProfile>;
  /** First answers of creates by `path + Idempotency-Key`, replayed when the profile honours the key. */
  readonly idempotent: Map<string, Answer>;
  /** Keeps `res` open without an answer until the client leaves or the simulator closes. */
  hold(res: ServerResponse): void;
}

/** Largest request body accepted by the APIs (1 MiB); above it, 413. */
export const API_BODY_CAP = 1024 * 1024;

/** Largest token request body (64 KiB); a form with three fields never comes close. */
export const TOKEN_BODY_CAP = 64 * 1024;
