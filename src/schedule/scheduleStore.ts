import type { JobsOptions, Queue } from 'bullmq';
import { isAbsolute } from 'node:path';
import { defined, UsageError } from '../errors.js';
import type { IngestOptions } from '../ingest/openOrderSource.js';
import type { ScheduledImportResult } from './runScheduledImport.js';
import { SCHEDULED_IMPORT, type ScheduledImportData } from './scheduledImportJob.js';

/** A schedule as `schedule set` takes it. */
export interface ScheduleInput {
  /** Letters, digits, `.`, `_`, `-`; also the job scheduler id. */
  name: string;
  /** A cron pattern: five fields, or six with seconds first (`*\/10 * * * * *`). */
  cron: string;
  /** IANA time zone the pattern is read in; default the workers' local zone. */
  tz?: string;
  /** An absolute file, folder or glob. */
  source: string;
  ingest?: IngestOptions;
}

/** A schedule as `schedule list` shows it. */
export interface ScheduleInfo {
  name: string;
  cron: string;
  tz: string | undefined;
  source: string;
  /** When it fires next (ms), if BullMQ knows. */
  next: number | undefined;
  /** The most recent finished firing BullMQ still keeps, if any. */
  lastRun?: LastRun;
}

/** What the last firing of a schedule did. */
export interface LastRun {
  finishedAt: number;
  /** `completed`, or `failed` with the reason (BullMQ retries it up to 3 times). */
  state: 'completed' | 'failed';
  failedReason?: string;
  result?: ScheduledImportResult;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Job options of the jobs a schedule makes: a failed import (Redis gone mid-file) is tried again,
 * which is safe because the ledger skips what the first try queued; a few finished jobs are kept
 * so `schedule list` can tell what the last run did.
 */
const SCHEDULED_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: 20,
  removeOnFail: 50,
};

/**
 * Schedules through BullMQ job schedulers on their own queue: the running workers fire them, and
 * BullMQ makes one job per firing however many workers run. Setting a name again replaces it.
 */
export class ScheduleStore {
  constructor(private readonly queue: Queue<ScheduledImportData>) {}

  async set(input: ScheduleInput): Promise<ScheduleInfo> {
    if (!NAME.test(input.name))
      throw new UsageError(
        'SCHEDULE_NAME_INVALID',
        `schedule name '${input.name}': use 1-64 letters, digits, '.', '_' or '-'.`,
      );
    if (!isAbsolute(input.source))
      throw new UsageError(
        'SOURCE_INVALID',
        `--source must be an absolute path (workers may run elsewhere), got '${input.source}'.`,
      );
    if (input.tz !== undefined) checkTimeZone(input.tz);
    const data: ScheduledImportData = { schedule: input.name, source: input.source, ingest: input.ingest ?? {} };
    try {
      await this.queue.upsertJobScheduler(
        input.name,
        { pattern: input.cron, ...(input.tz === undefined ? {} : { tz: input.tz }) },
        { name: SCHEDULED_IMPORT, data, opts: SCHEDULED_JOB_OPTIONS },
      );
    } catch (error) {
      if (error instanceof Error && /cron|pattern|invalid|constraint|validation/i.test(error.message)) {
        throw new UsageError(
          'CRON_INVALID',
          `--cron '${input.cron}' is not a cron pattern (${error.message}). Example: "0 2 * * *" is every night at 02:00.`,
          { cause: error },
        );
      }
      throw error;
    }
    return defined(await this.get(input.name), `the schedule ${input.name} just set`);
  }

  async get(name: string): Promise<ScheduleInfo | undefined> {
    const scheduler = await this.queue.getJobScheduler(name);
    return scheduler === undefined ? undefined : toInfo(scheduler);
  }

  /** Every schedule, soonest first, with its last finished firing. */
  async list(): Promise<ScheduleInfo[]> {
    const schedules = (await this.queue.getJobSchedulers(0, -1, true)).map(toInfo);
    const finished = await this.queue.getJobs(['completed', 'failed'], 0, 99);
    for (const info of schedules) {
      const newest = finished
        .flatMap((job) =>
          job.data?.schedule === info.name && job.finishedOn !== undefined ? [{ job, finishedOn: job.finishedOn }] : [],
        )
        .sort((a, b) => b.finishedOn - a.finishedOn)[0];
      if (newest === undefined) continue;
      const { job: last, finishedOn } = newest;
      const failed = last.failedReason !== undefined && last.failedReason !== '' && last.returnvalue == null;
      info.lastRun = {
        finishedAt: finishedOn,
        state: failed ? 'failed' : 'completed',
        ...(failed ? { failedReason: last.failedReason } : { result: last.returnvalue as ScheduledImportResult }),
      };
    }
    return schedules;
  }

  /** False when there was no such schedule. */
  remove(name: string): Promise<boolean> {
    return this.queue.removeJobScheduler(name);
  }
}

type SchedulerJson = Awaited<ReturnType<Queue<ScheduledImportData>['getJobSchedulers']>>[number];

function toInfo(scheduler: SchedulerJson): ScheduleInfo {
  return {
    name: scheduler.key,
    cron: scheduler.pattern ?? (scheduler.every === undefined ? '' : `every ${scheduler.every} ms`),
    tz: scheduler.tz,
    source: scheduler.template?.data?.source ?? '',
    next: scheduler.next,
  };
}

function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    throw new UsageError(
      'TZ_INVALID',
      `--tz '${tz}' is not a time zone; use an IANA name such as Europe/Amsterdam or UTC.`,
    );
  }
}
