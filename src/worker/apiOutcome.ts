/**
 * The classified result of one API call, as the delivery client returns it (src/delivery).
 * Repeated here structurally so the worker depends on the shape, not on the HTTP layer.
 */
export type ApiOutcome =
  | { kind: 'delivered'; status: number; body: unknown; remoteId?: string }
  | { kind: 'retry'; status?: number; retryAfterMs?: number; code: string; message: string; body?: unknown }
  | { kind: 'rateLimited'; status: 429; retryAfterMs: number; code: string; message: string }
  | { kind: 'unauthorized'; status: number; code: string; message: string; body?: unknown }
  | { kind: 'permanent'; status: number; code: string; message: string; body: unknown; bodyTruncated: boolean }
  | { kind: 'ambiguous'; code: string; message: string; status?: number };
