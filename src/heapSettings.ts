/**
 * V8 heap settings for the commands that read a whole order file in this process. Their live heap is small (16 MiB
 * at the peak of a `validate`, measured after a full GC), but V8 lets the old generation grow to up to 4 times what
 * was live after the last full collection before it marks again, so the peak RSS was 160-190 MiB, most of it garbage
 * not yet collected. `--heap-growing-percent` is read by V8 at each full collection, so setting it once the process
 * runs takes effect (unlike --max-semi-space-size, fixed when the heap is set up: setting it here changed nothing).
 */
import { setFlagsFromString } from 'node:v8';

/**
 * The old generation is marked once it has doubled over what was live after the last full collection. Measured on
 * 1,000,000 rows (BENCHMARKS.md): peak RSS 135 MiB against 185; 50 gave 122 MiB for 15% more CPU, and keeping the
 * young generation at its first size (--semi-space-growth-factor=1) another 30 MiB less for 15% more CPU.
 *
 * No allocation-site pretenuring: in about half the runs of `validate` (300,000 grouped rows) V8 chose, early on, to
 * allocate some row objects straight in the old generation; they die young there, keep what they point to alive
 * through every scavenge (4 MB survivors each instead of 1), and the run made ~20 full collections instead of 3:
 * CPU 3.2-3.9 s against 2.0-2.2 s, peak 126-133 MiB against 113. Without it every run is the fast one.
 */
const FILE_HEAP_FLAGS = ['--heap-growing-percent=100', '--no-allocation-site-pretenuring'] as const;

/**
 * Commands that read whole files here; not those that deliver (`worker`, `watch --deliver`): a growing factor of 2
 * raised their CPU per order. Pretenuring off, measured alone on `worker` (8,000 and 40,000 orders at concurrency 50
 * and 200, A/B alternated), changed neither its CPU per 1,000 orders (0.15 at c=200 either way) nor its collections
 * (2-4 full ones, never the ~20 of `validate`'s slow runs); only its peak RSS at c=200 was steadier (~212 MiB against
 * 211-258 over 40,000 orders).
 */
const FILE_COMMANDS: ReadonlySet<string> = new Set(['validate', 'import', 'watch']);

/**
 * Sets FILE_HEAP_FLAGS for `command` when it is one that reads whole files; a flag the user gave on node's command
 * line or in NODE_OPTIONS (`nodeFlags`) is left as they set it. Returns the flags set. V8's flags belong to the
 * process: call it only in the process that runs this one command (src/cli.ts when executed).
 */
export function tuneHeapFor(
  command: string,
  options: { delivers: boolean },
  nodeFlags: readonly string[],
): readonly string[] {
  const set = heapFlagsFor(command, options, nodeFlags);
  for (const flag of set) setFlagsFromString(flag);
  return set;
}

/** The flags tuneHeapFor sets for `command`, without setting them. */
export function heapFlagsFor(
  command: string,
  options: { delivers: boolean },
  nodeFlags: readonly string[],
): readonly string[] {
  if (!FILE_COMMANDS.has(command) || options.delivers) return [];
  // A flag's name without its value and without `no-` (--allocation-site-pretenuring given keeps pretenuring on).
  const name = (flag: string): string | undefined =>
    flag
      .split('=')[0]
      ?.replaceAll('_', '-')
      .replace(/^--no-/, '--');
  const given = new Set(nodeFlags.map(name));
  return FILE_HEAP_FLAGS.filter((flag) => !given.has(name(flag)));
}
