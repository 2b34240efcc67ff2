/**
 * Resolves after `ms` milliseconds. The timer is unref'd: an injected delay must not keep a
 * closed simulator's process alive (the open server is what keeps it running).
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
