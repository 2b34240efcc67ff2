import { readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isUtf8 } from 'node:buffer';
import type { Logger } from '../logger.js';
import type { DropFolder } from './dropFolder.js';

/**
 * The names in inbox/, every one usable. A name that is not valid UTF-8 (a Latin-1 `ü` from an
 * old SMB or FTP upload) cannot be used as a string path (Node would replace the byte with
 * U+FFFD and find no such file), so it would be ignored without a word. Such a file is renamed
 * in place, reading its name as Latin-1 (`Müller.csv`), and then taken like any other; the
 * rename is logged with the original bytes.
 */
export async function inboxNames(folder: DropFolder, log: Logger): Promise<string[]> {
  const raw = await readdir(folder.inbox, { encoding: 'buffer' });
  const names: string[] = [];
  for (const bytes of raw) {
    if (isUtf8(bytes)) {
      names.push(bytes.toString('utf8'));
      continue;
    }
    const renamed = await freeName(folder.inbox, bytes.toString('latin1'));
    try {
      await rename(Buffer.concat([Buffer.from(folder.inbox + '/'), bytes]), join(folder.inbox, renamed));
      log.warn(
        { file: renamed, originalNameHex: bytes.toString('hex') },
        'a drop-folder file name was not UTF-8: renamed, reading it as Latin-1, and taken',
      );
      names.push(renamed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // taken by another watcher meanwhile
    }
  }
  return names;
}

async function freeName(dir: string, wanted: string): Promise<string> {
  for (let n = 1; ; n++) {
    const name = n === 1 ? wanted : wanted.replace(/(\.[^.]*)?$/, (ext) => `-${n}${ext}`);
    if ((await stat(join(dir, name)).catch(() => undefined)) === undefined) return name;
  }
}
