import { readdir, readFile, readlink, realpath } from 'node:fs/promises';

/**
 * Whether any process has `path` open for writing, where that can be known: on Linux, by reading
 * every /proc/<pid>/fd link and, for one that names `path`, its fdinfo `flags` (O_WRONLY or O_RDWR).
 * Best effort: processes of other users whose fd folder cannot be read are not seen (run the
 * watcher as the uploading user, or root, to see them), and where /proc does not exist (macOS,
 * Windows) the answer is `false`, so the size-and-mtime rule (`--stable`) alone decides.
 */
export async function isOpenForWriting(file: string): Promise<boolean> {
  let pids: string[];
  let path: string;
  try {
    path = await realpath(file); // /proc's links name the resolved path
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && name !== String(process.pid));
  } catch {
    return false;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue; // gone meanwhile, or another user's
    }
    for (const fd of fds) {
      try {
        if ((await readlink(`/proc/${pid}/fd/${fd}`)) !== path) continue;
        const flags = /^flags:\s*([0-7]+)/m.exec(await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1];
        // O_ACCMODE: 0 read-only, 1 write-only, 2 read-write.
        if (flags !== undefined && (parseInt(flags, 8) & 3) !== 0) return true;
      } catch {
        continue; // closed meanwhile
      }
    }
  }
  return false;
}
