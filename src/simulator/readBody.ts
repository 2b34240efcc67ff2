/** Reading a request body with a size cap. */
import type { IncomingMessage } from 'node:http';

/** Outcome of reading a capped body. */
export type BodyRead = { ok: true; body: Buffer } | { ok: false; reason: 'tooLarge' | 'aborted' };

// How much of an oversized body is read and thrown away before answering 413. Closing a socket
// with unread data sends a TCP reset, which can destroy the 413 before the client reads it.
const DRAIN_LIMIT = 16 * 1024 * 1024;

/**
 * Reads the whole request body, up to `cap` bytes. An oversized body is drained (up to a
 * limit) rather than kept, so the 413 the caller sends (with `connection: close`) arrives.
 */
export function readBody(req: IncomingMessage, cap: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (declared > cap + DRAIN_LIMIT) return Promise.resolve({ ok: false, reason: 'tooLarge' });
  return new Promise((resolve) => {
    let chunks: Buffer[] | undefined = declared > cap ? undefined : [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (chunks !== undefined) {
        if (size > cap) chunks = undefined;
        else chunks.push(chunk);
      }
      if (size > cap + DRAIN_LIMIT) {
        cleanup();
        req.pause();
        resolve({ ok: false, reason: 'tooLarge' });
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (chunks === undefined) resolve({ ok: false, reason: 'tooLarge' });
      else resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    };
    const onAbort = (): void => {
      cleanup();
      resolve({ ok: false, reason: 'aborted' });
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    // 'close' before 'end' means the client went away mid-body.
    req.on('close', onAbort);
  });
}
