import { readFile } from 'node:fs/promises';

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** The CPU seconds of several processes together. */
export async function totalCpuSeconds(pids: readonly number[]): Promise<number> {
  return (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
}
