/**
 * /__admin/*: the simulator's controls for other processes (the CLI's simulator, benchmarks,
 * multi-process tests). No authentication: it is a loopback test tool. Admin requests are not
 * counted, so reading the counters does not change them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isBulkorderError } from '../errors.js';
import { apiError, writeAnswer, type Answer } from './answer.js';
import { readBody } from './readBody.js';
import type { Simulator } from './simulatorTypes.js';

type AdminControls = Pick<Simulator, 'counters' | 'orders' | 'setFaults' | 'revokeTokens' | 'reset'> & {
  faults(): unknown;
};

const OK: Answer = { status: 200, body: { ok: true } };

/** Handles one admin request; `action` is the path after /__admin/. */
export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  sim: AdminControls,
  action: string,
): Promise<void> {
  const method = req.method ?? 'GET';
  const route = `${method} ${action}`;
  switch (route) {
    case 'GET counters':
      return writeAnswer(res, { status: 200, body: sim.counters() }, undefined);
    case 'GET orders':
      return writeAnswer(res, { status: 200, body: sim.orders() }, undefined);
    case 'GET faults':
      return writeAnswer(res, { status: 200, body: sim.faults() as object }, undefined);
    case 'POST revoke-tokens':
      sim.revokeTokens();
      return writeAnswer(res, OK, undefined);
    case 'POST reset':
      sim.reset();
      return writeAnswer(res, OK, undefined);
    case 'POST faults':
      return writeAnswer(res, await setFaults(req, sim), undefined);
    default: {
      const known = ['counters', 'orders', 'faults', 'revoke-tokens', 'reset'].includes(action);
      return writeAnswer(
        res,
        known
          ? apiError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /__admin/${action}.`)
          : apiError(404, 'NOT_FOUND', `No admin endpoint /__admin/${action}.`),
        undefined,
      );
    }
  }
}

async function setFaults(req: IncomingMessage, sim: AdminControls): Promise<Answer> {
  const read = await readBody(req, 1024 * 1024);
  if (!read.ok)
    return apiError(413, 'PAYLOAD_TOO_LARGE', 'The faults body is too large.', { headers: { connection: 'close' } });
  let patch: unknown;
  try {
    patch = JSON.parse(read.body.toString('utf8'));
  } catch {
    return apiError(400, 'MALFORMED_JSON', 'The faults body is not valid JSON.');
  }
  try {
    sim.setFaults(patch as never);
  } catch (error) {
    if (isBulkorderError(error)) return apiError(400, error.code, error.message);
    throw error;
  }
  return { status: 200, body: sim.faults() as object };
}
