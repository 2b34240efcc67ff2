import { ACCOUNTS } from './accounts.js';
import { ORDERS } from './orders.js';
import type { RecordKind, RecordKindName } from './recordKind.js';

/** Every record kind, by name: the CLI chooses one with the `accounts` subcommand tree. */
export const KINDS: Readonly<Record<RecordKindName, RecordKind<unknown>>> = { orders: ORDERS, accounts: ACCOUNTS };
