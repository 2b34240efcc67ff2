import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';

/** Where Bull Board is mounted in the dashboard. */
export const BOARD_PATH = '/queues';

/**
 * The only Bull Board actions a writable dashboard lets through: promoting a delayed job (its next attempt
 * now rather than after its backoff; the ledger still lets each order be sent once). Everything else would
 * go around the ledger: removing, cleaning, emptying or obliterating strands orders the ledger holds as
 * queued (their batch never settles); adding, duplicating or editing a job sends data no import checked;
 * retrying a failed job repeats what its dead letter already records (`bulkorder dead-letters retry` is the
 * way); pausing or resuming fights the breaker's pause (`bulkorder pause` / `resume` are).
 */
const SAFE_ACTIONS: readonly RegExp[] = [/^\/api\/queues\/[^/]+\/promote$/, /^\/api\/queues\/[^/]+\/[^/]+\/promote$/];

/** True for a Bull Board API call (path below BOARD_PATH) that a writable dashboard allows. */
export function isSafeBoardAction(method: string, path: string): boolean {
  return method === 'PUT' && SAFE_ACTIONS.some((safe) => safe.test(path));
}

/**
 * Bull Board (the view BullMQ users know: raw jobs, their data, attempts and errors) over the dashboard's
 * queues, for dashboardApp to mount at {@link BOARD_PATH} behind its token and Host check. `readOnly`:
 * Bull Board's readOnlyMode, no action shown or accepted; otherwise dashboardApp still refuses every action
 * but {@link isSafeBoardAction}.
 */
export function queueBoard(queues: readonly Queue[], readOnly: boolean): Hono {
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: readOnly, allowRetries: false })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'bulkorder queues' } },
  });
  return adapter.registerPlugin();
}
