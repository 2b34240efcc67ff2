import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FileRefusedError, UsageError } from '../errors.js';

const ORDER_FILE = /\.(csv|tsv|txt|json|ndjson|jsonl)$/i;
/** What imports write beside their input: never taken as input, or last night's rejects would be imported tonight. */
const OUR_OUTPUT = /\.(rejects|results)\.csv$/i;

/**
 * The files a schedule's source names at the moment it runs, sorted: a file; every order file
 * directly in a folder; or a glob whose `*` and `?` are in the last path segment
 * (`/data/exports/orders-*.csv`). Our own rejects and results files are left out. A source that
 * names nothing is not an error (nothing arrived tonight); an unreadable folder is (FileRefusedError), and
 * a source `schedule set` would have refused (UsageError, as checkScheduleSource).
 */
export async function resolveSource(source: string): Promise<string[]> {
  const name = basename(source);
  if (/[*?]/.test(name)) {
    const folder = dirname(source);
    if (/[*?]/.test(folder))
      throw new UsageError('SOURCE_INVALID', `${source}: wildcards are only allowed in the last part of the path`);
    const pattern = globPattern(name);
    return regularFiles(folder, (entry) => pattern.test(entry) && !OUR_OUTPUT.test(entry));
  }
  let info;
  try {
    info = await stat(source);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && ORDER_FILE.test(name)) return []; // tonight's file has not arrived
    throw new FileRefusedError(
      'SOURCE_UNREADABLE',
      source,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { cause: error },
    );
  }
  if (info.isDirectory()) return regularFiles(source, (entry) => ORDER_FILE.test(entry) && !OUR_OUTPUT.test(entry));
  return [source];
}

/**
 * Checked when a schedule is set (UsageError, exit 2): the source must be something that can
 * name files on a later night. A folder or file must exist, except an order file not there yet
 * (tonight's export) whose folder exists; a glob's folder must exist.
 */
export async function checkScheduleSource(source: string): Promise<void> {
  const name = basename(source);
  const folderOf = async (folder: string, what: string): Promise<void> => {
    const info = await stat(folder).catch(() => undefined);
    if (info?.isDirectory() !== true)
      throw new UsageError(
        'SOURCE_NOT_FOUND',
        `--source ${source}: ${what} ${folder} does not exist (or is not a folder); give an existing file, folder or folder/pattern-*.csv`,
      );
  };
  if (/[*?]/.test(name)) {
    if (/[*?]/.test(dirname(source)))
      throw new UsageError(
        'SOURCE_INVALID',
        `--source ${source}: wildcards are only allowed in the last part of the path`,
      );
    return folderOf(dirname(source), 'the folder');
  }
  const info = await stat(source).catch(() => undefined);
  if (info !== undefined) return;
  if (!ORDER_FILE.test(name))
    throw new UsageError(
      'SOURCE_NOT_FOUND',
      `--source ${source}: no such file or folder; give an existing file, folder or folder/pattern-*.csv`,
    );
  return folderOf(dirname(source), 'the folder of the file,');
}

async function regularFiles(folder: string, wanted: (name: string) => boolean): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    throw new FileRefusedError(
      'SOURCE_UNREADABLE',
      folder,
      `the folder cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      { cause: error },
    );
  }
  const files: string[] = [];
  for (const name of names.filter(wanted).sort()) {
    const info = await stat(join(folder, name)).catch(() => undefined);
    if (info?.isFile() === true) files.push(join(folder, name));
  }
  return files;
}

function globPattern(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}
