import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LedgerLostError, UsageError } from '../errors.js';
import { writeFileAtomic } from '../files/atomicFile.js';
import type { PriorResults } from '../batches/priorResults.js';
import type { NamespaceMarker } from '../ledger/namespaceMarker.js';

/**
 * The import journal, `<input>.journal` beside the input (issue 26): per target the file was
 * imported into, the batch, the namespace marker's epoch it relied on and how far it got. Redis
 * is the ledger; the journal is what tells a later import that Redis forgot it (the marker gone
 * or written again with another epoch), so nothing is sent twice on a ledger that lost its memory.
 */
export interface ImportJournal {
  journal: 1;
  /** The input, absolute. */
  file: string;
  imports: JournalEntry[];
}

/** One target's latest import of the file. */
export interface JournalEntry {
  /** The target's Redis namespace (`bulkorder:<env>:<id>:...`): its identity. */
  target: string;
  env: string;
  /** The namespace marker's epoch when the import began (src/ledger/namespaceMarker.ts). */
  epoch: string;
  batchId: string;
  startedAt: string;
  updatedAt: string;
  /** `importing` from the batch's reservation; `imported` when the file is queued; `complete` when its results file is written. */
  state: 'importing' | 'imported' | 'complete';
  counts?: Record<string, number>;
  /** The results file this target's last `--wait` run wrote (absolute) and the sha256 of its bytes. */
  resultsFile?: string;
  resultsSha256?: string | undefined;
}

export function journalPath(file: string): string {
  return join(dirname(file), `${basename(file)}.journal`);
}

/** The journal of `file`, or undefined when there is none; one that is not a journal is refused (exit 2) naming it. */
export async function readJournal(file: string): Promise<ImportJournal | undefined> {
  const path = journalPath(file);
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new UsageError(
      'JOURNAL_UNREADABLE',
      `cannot read the import journal ${path} (${error.code ?? error.message}); make it readable, or move it away to import without it`,
      { cause: error, details: { path, errno: error.code } },
    );
  });
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<ImportJournal>;
    if (parsed.journal === 1 && Array.isArray(parsed.imports)) return parsed as ImportJournal;
  } catch {
    // refused below
  }
  throw new UsageError(
    'JOURNAL_UNREADABLE',
    `${path} is not a bulkorder import journal; it is written beside each imported file (README "The import journal"). Move it away to import without it.`,
    { details: { path } },
  );
}

/**
 * Writes the journal atomically through src/files/ (a temp name, then rename): a crash leaves the
 * old one or the new one, never half. A journal that cannot be written (a full disk, a read-only
 * folder) stops the import, exit 5 naming it: without it a Redis that forgets would go unnoticed
 * and the next run could send everything again. `then` says what the failure means for the run.
 */
export async function writeJournal(file: string, journal: ImportJournal, then: string): Promise<void> {
  await writeFileAtomic(journalPath(file), JSON.stringify(journal, null, 2) + '\n', {
    code: 'JOURNAL_WRITE_FAILED',
    then,
  });
}

/** `journal` with `entry` as its target's entry (one per target: the latest import). */
export function withEntry(file: string, journal: ImportJournal | undefined, entry: JournalEntry): ImportJournal {
  const others = (journal?.imports ?? []).filter((e) => e.target !== entry.target);
  return { journal: 1, file: resolve(file), imports: [...others, entry] };
}

/** How an import goes on when Redis forgot: refuse (the default), trust the results file, or send everything. */
export type LedgerLossPolicy = 'refuse' | 'trust-results' | 'force';

/**
 * Refuses (LEDGER_LOST, exit 5) when the journal says this file was imported into `target` under
 * another epoch than the namespace has now: the ledger that knew what was delivered is gone. The
 * refusal names what was found, when, the batch, and the two ways on. Returns the lost entry when
 * the policy lets the import go on, undefined when nothing was lost.
 */
export function checkLedger(args: {
  file: string;
  journal: ImportJournal | undefined;
  target: string;
  marker: NamespaceMarker;
  /** The marker was missing and this process wrote it (services.namespace.created). */
  markerCreated: boolean;
  prior: PriorResults | undefined;
  resultsPath: string;
  policy: LedgerLossPolicy;
  cli: string;
  noun: string;
}): JournalEntry | undefined {
  const entry = args.journal?.imports.find((e) => e.target === args.target);
  if (entry === undefined || entry.epoch === args.marker.epoch) return undefined;
  if (args.policy !== 'refuse') return entry;
  const found = args.markerCreated
    ? 'its namespace marker was missing (written again just now)'
    : `its namespace marker was written again at ${new Date(args.marker.createdAt).toISOString()} (epoch ${args.marker.epoch}, not ${entry.epoch})`;
  const results =
    args.prior === undefined
      ? `there is no results file this target's journal entry names (${args.resultsPath}), so --trust-results would send every ${args.noun}`
      : `${args.prior.path} (written ${new Date(args.prior.writtenAt).toISOString()}) records ${args.prior.delivered.size} of ${args.prior.rows} as delivered`;
  throw new LedgerLostError(
    `${args.file} was imported into this target as batch ${entry.batchId} at ${entry.startedAt} (${entry.state}; journal ${journalPath(args.file)}), but Redis no longer holds that ledger: ${found}, as after a Redis restarted without persistence or flushed. Nothing was sent: sending now could repeat ${args.noun}s already delivered. ` +
      `Check the service, then run again with --trust-results to send only the ${args.noun}s the results file does not record as delivered (${results}), or with --force to send every ${args.noun}.`,
    {
      file: args.file,
      journal: journalPath(args.file),
      target: args.target,
      batchId: entry.batchId,
      importedAt: entry.startedAt,
      journalState: entry.state,
      journalEpoch: entry.epoch,
      namespaceEpoch: args.marker.epoch,
      namespaceCreatedAt: new Date(args.marker.createdAt).toISOString(),
      markerWasMissing: args.markerCreated,
      resultsFile: args.prior === undefined ? null : args.prior.path,
      resultsDelivered: args.prior?.delivered.size ?? 0,
      retry: [`${args.cli} import ${args.file} --trust-results`, `${args.cli} import ${args.file} --force`],
    },
  );
}
