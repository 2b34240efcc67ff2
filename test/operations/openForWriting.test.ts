/**
 * The drop folder's "still open for writing" check (src/watch/openForWriting.ts): a real process
 * holding the file open, seen through /proc on Linux.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isOpenForWriting } from '../../src/watch/openForWriting.js';
import { waitFor } from '../helpers/cliProcess.js';

let dir: string | undefined;
const holders: ChildProcess[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) {
    if (holder.exitCode === null && holder.signalCode === null) {
      const gone = new Promise((r) => holder.once('exit', r));
      holder.kill('SIGKILL');
      await gone;
    }
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A shell that opens `file` (`>>` to write, `<` to read) and sleeps; resolves once it has it open. */
async function hold(file: string, mode: '>>' | '<'): Promise<ChildProcess> {
  const holder = spawn('sh', ['-c', `exec 3${mode}"$1"; exec sleep 600`, 'sh', file], { stdio: 'ignore' });
  holders.push(holder);
  await waitFor(() => {
    try {
      return readdirSync(`/proc/${holder.pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${holder.pid}/fd/${fd}`) === file;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  }, 'the holder to open the file');
  return holder;
}

describe.runIf(process.platform === 'linux')('isOpenForWriting (Linux /proc)', () => {
  it('is true while another process holds the file open for writing, false once it closed it and for a reader', async () => {
    dir = await mkdtemp(join(tmpdir(), 'bulkorder-openwrite-'));
    const file = join(dir, 'upload.csv');
    await writeFile(file, 'orderRef\n');
    expect(await isOpenForWriting(file)).toBe(false);

    const writer = await hold(file, '>>');
    expect(await isOpenForWriting(file)).toBe(true);
    const gone = new Promise((r) => writer.once('exit', r));
    writer.kill('SIGKILL');
    await gone;
    expect(await isOpenForWriting(file)).toBe(false);

    await hold(file, '<');
    expect(await isOpenForWriting(file)).toBe(false);
  }, 60_000);
});
