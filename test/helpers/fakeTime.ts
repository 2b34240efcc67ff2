import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's libfaketime (.ci/run installs it): preloaded, it shifts the wall clock of one process. */
const LIBFAKETIME = ['x86_64', 'aarch64']
  .map((arch) => `/usr/lib/${arch}-linux-gnu/faketime/libfaketime.so.1`)
  .find((path) => existsSync(path));

/** The environment that runs a process `offset` off the real clock ('-10m', '+10m'). */
export function skewed(offset: string): Record<string, string> {
  if (LIBFAKETIME === undefined) throw new Error('libfaketime is missing: apt-get install -y faketime');
  // The monotonic clock stays true: only the wall clock (Date.now()) is off, as on a host whose NTP is.
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

/** How far the wall clock of a node process under `env` is from this one's (ms). */
export function skewOf(env: Record<string, string>): number {
  const before = Date.now();
  const theirs = Number(
    execFileSync(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], {
      env: { ...process.env, ...env },
    }).toString(),
  );
  return theirs - before;
}
