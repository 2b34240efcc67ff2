import { describe, expect, it } from 'vitest';
import { FileStability } from '../../src/watch/fileStability.js';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isInProgressName, newClaimName, openDropFolder, originalName } from '../../src/watch/dropFolder.js';

describe('drop folder: when a file is complete', () => {
  it('takes a file only after its size and time stayed unchanged for the stable time', () => {
    const stability = new FileStability(5000);
    expect(stability.observe('a.csv', { size: 10, mtimeMs: 1 }, 0)).toBe(false);
    expect(stability.observe('a.csv', { size: 10, mtimeMs: 1 }, 4999)).toBe(false);
    expect(stability.observe('a.csv', { size: 10, mtimeMs: 1 }, 5000)).toBe(true);
  });

  it('keeps resetting the clock of a file that is still growing (a half-written upload)', () => {
    const stability = new FileStability(5000);
    let now = 0;
    for (let size = 1; size <= 10; size++, now += 4000)
      expect(stability.observe('growing.csv', { size, mtimeMs: now }, now)).toBe(false);
    expect(stability.observe('growing.csv', { size: 10, mtimeMs: 36_000 }, now + 5000)).toBe(true);
  });

  it('forgets files that left the inbox, so a new file under the same name waits again', () => {
    const stability = new FileStability(1000);
    stability.observe('a.csv', { size: 1, mtimeMs: 1 }, 0);
    stability.keepOnly(new Set());
    expect(stability.observe('a.csv', { size: 1, mtimeMs: 1 }, 5000)).toBe(false);
  });

  it('never takes names of uploads in progress or hidden files; claim names are unique and keep the original', () => {
    for (const name of [
      'orders.csv.tmp',
      'orders.csv.part',
      'orders.CSV.PART',
      '.orders.csv.Xa12',
      '~$orders.xlsx',
      'x.crdownload',
    ])
      expect(isInProgressName(name)).toBe(true);
    for (const name of ['orders.csv', 'orders.rejects.csv', 'part.csv', 'tmp.json'])
      expect(isInProgressName(name)).toBe(false);
    const a = newClaimName('orders.csv', new Date('2026-11-22T02:00:00.123Z'));
    expect(a).toMatch(/^20261122T020000Z-[0-9a-f]{6}\.orders\.csv$/);
    expect(originalName(a)).toBe('orders.csv');
    expect(newClaimName('orders.csv')).not.toBe(newClaimName('orders.csv'));
  });
});

describe('drop folder layout', () => {
  it('creates inbox/, processing/, done/ and failed/, and refuses a subfolder that is a link elsewhere', async () => {
    const base = await mkdtemp(join(tmpdir(), 'bulkorder-layout-'));
    const folder = await openDropFolder(join(base, 'drop'));
    expect(folder.inbox).toBe(join(folder.root, 'inbox'));
    await mkdir(join(base, 'elsewhere'));
    await mkdir(join(base, 'linked'));
    await symlink(join(base, 'elsewhere'), join(base, 'linked', 'inbox'));
    await expect(openDropFolder(join(base, 'linked'))).rejects.toMatchObject({
      code: 'WATCH_FOLDER_INVALID',
      exitCode: 2,
    });
    await rm(base, { recursive: true, force: true });
  });
});
