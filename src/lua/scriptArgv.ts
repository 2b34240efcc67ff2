/**
 * The ARGV of the scripts called with many arguments, named in the order of their headers' ARGV
 * lines (test/lua/scriptHeaders.test.ts holds each list equal to its header). A caller passes one
 * object; `argv` lays it out, so no call site counts positions.
 */
export const SCRIPT_ARGV = {
  settleOverMemory: [
    'token',
    'newState',
    'now',
    'retentionMs',
    'orderKey',
    'remoteId',
    'httpStatus',
    'code',
    'message',
    'parkedRecord',
    'parkedRetentionMs',
    'answered5xx',
    'prefix',
  ],
  release: ['newBatch', 'now', 'retentionMs', 'orderKey', 'who', 'note', 'jobJson', 'chunkId', 'chunkNumber', 'prefix'],
  unrelease: [
    'releasedBatch',
    'previousBatch',
    'now',
    'retentionMs',
    'orderKey',
    'recordJson',
    'score',
    'recordTtlMs',
    'chunkId',
    'prefix',
  ],
  resolve: ['expectedBatch', 'now', 'retentionMs', 'orderKey', 'remoteId', 'who', 'note', 'prefix'],
  recordFailure: [
    'now',
    'windowMs',
    'bucketPrefix',
    'attemptId',
    'orderKey',
    'signature',
    'minAttempts',
    'minOrders',
    'ratio',
    'openMs',
    'maxOpenMs',
    'class',
    'status',
    'code',
    'message',
    'healthy',
    'customer',
    'minCustomers',
    'batch',
    'minBatches',
  ],
  batchOutcome: [
    'orderKey',
    'kind',
    'signature',
    'answer',
    'canaryOrders',
    'refusedPercent',
    'probeMs',
    'maxProbeMs',
    'ttlMs',
    'batchId',
    'status',
    'code',
    'message',
    'minRefused',
  ],
  closeBreaker: [
    'now',
    'onlyHalfOpen',
    'failuresPrefix',
    'ordersPrefix',
    'customersPrefix',
    'trialCustomer',
    'exemptMs',
  ],
  tickBreaker: ['now', 'trialCalls', 'trialTimeoutMs', 'alertAfterMs', 'trialFallbackMs'],
  cutRate: [
    'now',
    'retryAfterMs',
    'floor',
    'decrease',
    'grantedAt',
    'localRate',
    'staleMs',
    'expireMs',
    'paced',
    'startShare',
    'bucketPrefix',
    'accepted',
    'measuredStart',
    'ownAccepted',
  ],
} as const satisfies Record<string, readonly string[]>;

/** A script whose ARGV is given by name. */
export type NamedScript = keyof typeof SCRIPT_ARGV;

/** The named arguments of a script: one field per ARGV line of its header. */
export type ArgvOf<N extends NamedScript> = { readonly [K in (typeof SCRIPT_ARGV)[N][number]]: string | number };

/** ARGV laid out by `argv`: one value per name, so a command of a named script takes exactly as many. */
export type NamedArgv<N extends NamedScript> = ValuesOf<(typeof SCRIPT_ARGV)[N]>;
type ValuesOf<T extends readonly string[]> = { -readonly [I in keyof T]: string | number };

/** The ARGV of script `name`, in its header's order. */
export function argv<N extends NamedScript>(name: N, values: ArgvOf<N>): NamedArgv<N> {
  const names: readonly (keyof ArgvOf<N>)[] = SCRIPT_ARGV[name];
  // The map keeps the names' length and order, which is all NamedArgv says.
  return names.map((key) => values[key]) as NamedArgv<N>;
}
