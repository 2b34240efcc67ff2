import type { Logger } from '../logger.js';
import { errorCode } from '../delivery/classifyOutcome.js';

/**
 * Logs a repeating error (Redis down: BullMQ and ioredis report every reconnect) once with its
 * stack, then at most one summary line per interval with the count and the last code, instead
 * of hundreds of stack traces.
 */
export function throttledErrors(logger: Logger, message: string, everyMs = 30_000): (error: Error) => void {
  let first = true;
  let suppressed = 0;
  let lastCode = '';
  let lastLog = 0;
  return (error) => {
    const now = Date.now();
    lastCode = errorCode(error);
    if (first) {
      first = false;
      lastLog = now;
      logger.error({ err: error }, message);
      return;
    }
    suppressed++;
    if (now - lastLog < everyMs) return;
    logger.error({ code: lastCode, repeated: suppressed, sinceMs: now - lastLog }, `${message} (repeated)`);
    suppressed = 0;
    lastLog = now;
  };
}
