import { ORDER_RESULTS } from './resultsLayout.js';
import { canonicalRows } from './originalRows.js';
import { ORDER_COLUMNS } from '../ingest/orderColumns.js';
import { ORDER_FIELDS } from '../ingest/orderFields.js';
import { openOrderSource } from '../ingest/openOrderSource.js';
import { PACKED_LAYOUT_VERSION, packPayload, packPayloadExactly, unpackPayload } from '../ingest/orderShape.js';
import type { OrderPayload } from '../ingest/types.js';
import { DELIVER_ORDERS, ORDERS_QUEUE } from '../queues.js';
import { ORDER_WORDING } from './recordWording.js';
import { createBusinessApiClient } from '../delivery/businessApiClient.js';
import { cliOf, type RecordKind } from './recordKind.js';

/** Orders to the Business API: `bulkorder import|status|dead-letters|review ...`. */
export const ORDERS: RecordKind<OrderPayload> = {
  name: 'orders',
  noun: ORDER_COLUMNS.noun,
  columns: ORDER_COLUMNS,
  openSource: openOrderSource,
  api: 'business',
  queueName: ORDERS_QUEUE,
  jobName: DELIVER_ORDERS,
  // Orders own the target's prefix itself (the keyspace came first).
  prefix: (environmentPrefix) => environmentPrefix,
  retentionMs: (delivery) => delivery.ledgerRetentionMs,
  results: ORDER_RESULTS,
  wording: ORDER_WORDING,
  customerOf: (payload) => String(payload.businessCustomerId),
  cli: cliOf('orders'),
  rebuildRows: { columns: ORDER_FIELDS, rows: canonicalRows },
  payloadCodec: {
    version: PACKED_LAYOUT_VERSION,
    pack: packPayload,
    unpack: unpackPayload,
    packExactly: packPayloadExactly,
  },
  connect(settings, deps) {
    const client = createBusinessApiClient(settings, deps);
    return { send: (payload, order) => client.createOrder(payload, { idempotencyKey: order.key }) };
  },
};
