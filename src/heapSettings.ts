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
 */
const FILE_HEAP_FLAGS = ['--heap-growing-percent=100'] as const;

/** Commands that read whole files here; `watch --deliver` also delivers, whose CPU per order the setting would raise. */
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
  if (!FILE_COMMANDS.has(command) || options.delivers) return [];
  const given = new Set(nodeFlags.map((flag) => flag.split('=')[0]?.replaceAll('_', '-')));
  const set = FILE_HEAP_FLAGS.filter((flag) => !given.has(flag.split('=')[0]));
  for (const flag of set) setFlagsFromString(flag);
  return set;
}
