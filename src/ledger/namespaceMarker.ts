import { randomBytes } from 'node:crypto';
import { DataVersionError, defined } from '../errors.js';
import type { Keyspace } from '../keyspace.js';
import type { RedisClient } from '../redis.js';
import { redisTime } from '../redis/redisClock.js';

/**
 * The version of the data bulkorder writes into a namespace (one record kind's keyspace): raised
 * when a stored shape changes so that older code would misread it, with a migration below.
 * 1: before the marker (jobs without `v`, chunk jobs packed in layout 1). 2: every job says its
 * version and every chunk job its packed layout (src/ledger/jobData.ts); nothing stored before changes.
 */
export const DATA_VERSION = 2;

/**
 * How data of an older version becomes the next one, by the version it starts from. Each runs
 * before the marker is raised and must be safe to run twice (two processes may start together).
 */
const MIGRATIONS: Readonly<Record<number, (redis: RedisClient, keys: Keyspace) => Promise<void>>> = {
  1: migrateFrom1,
};

/**
 * 1 -> 2: nothing to rewrite. Jobs without `v` read as version 1 and chunk jobs without `pk` as
 * packed layout 1 (src/ledger/jobData.ts, src/ingest/packedLayouts.ts); test/compat/fixtures/v1 proves it.
 */
async function migrateFrom1(): Promise<void> {}

/** The `<namespace>:meta` hash: which data version the namespace holds, and since when. */
export interface NamespaceMarker {
  dataVersion: number;
  /** When the marker was first written (ms). */
  createdAt: number;
  /** The bulkorder version that wrote it first. */
  createdBy: string;
  /**
   * A random id given when the marker is written: a namespace that vanished and came back (a Redis
   * restarted without persistence, a FLUSHALL) has another one, so an import journal that names the
   * old one knows the ledger it relied on is gone (src/importer/importJournal.ts).
   */
  epoch: string;
  /** The last migration's time and bulkorder version, if any. */
  upgradedAt?: number;
  upgradedBy?: string;
}

export interface EnsuredMarker {
  /**
   * True when this call wrote the marker into a namespace without one and without data: a new
   * namespace, or a Redis that forgot it (issue 26 tells the two apart by what is known elsewhere).
   */
  created: boolean;
  /** The data version the namespace holds now (DATA_VERSION, after any migration). */
  version: number;
  /** The version it held before this call migrated it; undefined when no migration ran. */
  migratedFrom?: number;
  marker: NamespaceMarker;
}

function newEpoch(): string {
  return randomBytes(8).toString('hex');
}

/** The namespace's marker, or undefined when it has none. */
export async function readNamespaceMarker(redis: RedisClient, keys: Keyspace): Promise<NamespaceMarker | undefined> {
  const fields = await redis.hgetall(keys.meta);
  if (fields.dataVersion === undefined) return undefined;
  return {
    dataVersion: Number(fields.dataVersion),
    createdAt: Number(fields.createdAt ?? 0),
    createdBy: fields.createdBy ?? '',
    epoch: fields.epoch ?? '',
    ...(fields.upgradedAt === undefined ? {} : { upgradedAt: Number(fields.upgradedAt) }),
    ...(fields.upgradedBy === undefined ? {} : { upgradedBy: fields.upgradedBy }),
  };
}

/**
 * Writes the marker where it is absent, migrates data of an older version, and refuses data of a
 * newer one (DataVersionError, exit 5) before this process reads or writes anything else there.
 * A namespace with batches and no marker was written before markers existed: it is version 1.
 * `processVersion`: this bulkorder's version, kept as createdBy / upgradedBy.
 */
export async function ensureNamespaceMarker(
  redis: RedisClient,
  keys: Keyspace,
  options: { processVersion: string; dataVersion?: number; now?: number },
): Promise<EnsuredMarker> {
  const known = options.dataVersion ?? DATA_VERSION;
  const now = options.now ?? (await redisTime(redis));
  let created = false;
  let marker = await readNamespaceMarker(redis, keys);
  if (marker === undefined) {
    const hasData = (await redis.exists(keys.batchIndex)) === 1;
    // HSETNX in one transaction: of processes starting together, exactly one writes the marker.
    const replies = await redis
      .multi()
      .hsetnx(keys.meta, 'dataVersion', String(hasData ? 1 : known))
      .hsetnx(keys.meta, 'createdAt', String(now))
      .hsetnx(keys.meta, 'createdBy', options.processVersion)
      .hsetnx(keys.meta, 'epoch', newEpoch())
      .exec();
    const [error, wrote] = replies?.[0] ?? [new Error('no reply')];
    if (error) throw error;
    created = wrote === 1 && !hasData;
    marker = await markerWritten(redis, keys);
  }
  if (marker.epoch === '') {
    // A marker written before epochs existed gets one now (HSETNX: of two processes, one wins).
    await redis.hsetnx(keys.meta, 'epoch', newEpoch());
    marker = await markerWritten(redis, keys);
  }
  const stored = marker.dataVersion;
  if (stored > known) {
    throw new DataVersionError(
      `Redis namespace ${keys.prefix} holds data version ${stored} (written by bulkorder ${marker.upgradedBy ?? marker.createdBy}); this bulkorder ${options.processVersion} knows versions up to ${known} and would misread it. Run the newer bulkorder here (README "Deployment").`,
      { namespace: keys.prefix, stored, known, writtenBy: marker.upgradedBy ?? marker.createdBy },
    );
  }
  if (stored === known) return { created, version: stored, marker };
  for (let version = stored; version < known; version++) {
    const migrate = MIGRATIONS[version];
    if (migrate === undefined) throw new Error(`no migration from data version ${version} to ${version + 1}`);
    await migrate(redis, keys);
    // Raised only, never lowered: another process may have migrated further meanwhile.
    const current = Number(await redis.hget(keys.meta, 'dataVersion'));
    if (current <= version)
      await redis.hset(
        keys.meta,
        'dataVersion',
        String(version + 1),
        'upgradedAt',
        String(now),
        'upgradedBy',
        options.processVersion,
      );
  }
  marker = await markerWritten(redis, keys);
  return { created, version: marker.dataVersion, migratedFrom: stored, marker };
}

/** The marker this process just wrote or read back (HSETNX above): there is one. */
async function markerWritten(redis: RedisClient, keys: Keyspace): Promise<NamespaceMarker> {
  return defined(await readNamespaceMarker(redis, keys), `the namespace marker of ${keys.prefix}`);
}
