import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import { readBatchCircuitEvents, type BatchCircuitEvent } from '../batches/batchCircuit.js';
import { claimEvent, notifyWatermark } from './eventClaims.js';
import type { Notifier } from './notifier.js';
import { startPollingWatch, type PollingWatch } from './pollingWatch.js';
import type { NotifyEvent } from './notifyEvent.js';

export interface BatchCircuitWatchOptions {
  services: { redis: RedisClient; keys: Keyspace; env: string; kind: { name: string; cli: string } };
  notifier: Notifier;
  logger: Logger;
  dashboardUrl?: string;
  /** How often the events log is looked at; default 5 s. */
  pollMs?: number;
}

/**
 * Announces batch circuits from their events log (src/batches/batchCircuit.ts): `batch-held`,
 * `batch-resumed`, `batch-cancelled`, `batch-released`, whoever made them (a worker's canary or
 * probe, a person's `batch cancel|release`, the dashboard). Each event is claimed by id, so any
 * number of workers send it once; events before the watermark are not announced.
 */
export function startBatchCircuitWatch(options: BatchCircuitWatchOptions): PollingWatch {
  const { redis, keys } = options.services;
  const checkOnce = async (): Promise<void> => {
    const from = await notifyWatermark(redis, keys);
    for (const event of await readBatchCircuitEvents(redis, keys, from)) {
      const notice = batchCircuitNotice(event, options.services, options.dashboardUrl);
      if (!(await claimEvent(redis, keys, notice.id))) continue;
      const held = event.type === 'held' ? undefined : await heldEventBefore(redis, keys, event);
      await options.notifier.notify(held === undefined ? notice : { ...notice, resolves: noticeId(held) });
    }
  };
  return startPollingWatch(checkOnce, { logger: options.logger, what: 'batch circuits', pollMs: options.pollMs });
}

/** A transition's notification id: `batch-held:<batch>:<at>`. */
function noticeId(event: BatchCircuitEvent): string {
  return `batch-${event.type}:${event.batchId}:${event.at}`;
}

/**
 * The `held` a resumed, released or cancelled batch ends (its notification is what a person was alerted
 * to): the batch's latest `held` logged at or before it, undefined if the log no longer has it.
 */
async function heldEventBefore(
  redis: RedisClient,
  keys: Keyspace,
  event: BatchCircuitEvent,
): Promise<BatchCircuitEvent | undefined> {
  const earlier = await redis.zrevrangebyscore(keys.batchCircuitEvents, event.at, '-inf');
  for (const text of earlier) {
    const logged = JSON.parse(text) as BatchCircuitEvent;
    if (logged.batchId === event.batchId && logged.type === 'held') return logged;
  }
  return undefined;
}

/**
 * The notification of one transition: the batch, its cause (status and code; the API's message is
 * left out, as it may echo an order's values), samples of the refused orders (keys only), and what a
 * person may do.
 */
function batchCircuitNotice(
  event: BatchCircuitEvent,
  facts: { env: string; kind: { name: string; cli: string } },
  dashboardUrl?: string,
): NotifyEvent {
  const c = event.circuit;
  const cli = facts.kind.cli;
  const link = dashboardUrl === undefined ? undefined : `${dashboardUrl}/batches/${encodeURIComponent(event.batchId)}`;
  const samples = c.samples.map((s) => s.orderKey).join(', ');
  const action = c.action === undefined ? '' : ` by ${c.action.by}${c.action.why === '' ? '' : ` (${c.action.why})`}`;
  const text = {
    held: `Batch ${event.batchId} HELD (${facts.env}): ${c.refusedCount} of its canary refused with ${c.cause ?? 'one cause'}; nothing more of it is sent, other batches go on. A probe follows${c.nextProbeAt === undefined ? '' : ` at ${new Date(c.nextProbeAt).toISOString()}`}. Refused e.g. ${samples || '-'}. Act: \`${cli} batch show|release|cancel ${event.batchId}\`.`,
    resumed: `Batch ${event.batchId} resumed (${facts.env}): its probe was accepted; the orders its canary refused are sent again.`,
    cancelled: `Batch ${event.batchId} cancelled${action} (${facts.env}): its unsent orders end as cancelled, none is sent.`,
    released: `Batch ${event.batchId} released${action} (${facts.env}): the rest is sent regardless of its canary.`,
  }[event.type];
  return {
    id: noticeId(event),
    event: `batch-${event.type}`,
    env: facts.env,
    kind: facts.kind.name,
    batchId: event.batchId,
    text: link === undefined ? text : `${text}\n${link}`,
    at: new Date(event.at).toISOString(),
    ...(c.cause === undefined ? {} : { reason: c.cause }),
    ...(c.code === undefined ? {} : { code: c.code }),
    counts: { refused: c.refusedCount, canaryAnswered: c.canaryAnswered, canaryAccepted: c.canaryAccepted },
    ...(c.samples.length === 0 ? {} : { samples: c.samples.map((s) => s.orderKey) }),
    action:
      event.type === 'held'
        ? `${cli} batch show|release|cancel ${event.batchId}`
        : (c.action?.kind ?? 'probe accepted'),
    ...(link === undefined ? {} : { dashboardUrl: link }),
  };
}
