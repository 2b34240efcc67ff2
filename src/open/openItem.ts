import type { Services } from '../services.js';

/**
 * One thing that still needs a person (`bulkorder open`, the dashboard's "Needs a person"): a dead
 * letter, a held order, a refused file, ... Every kind is described by one OpenSource
 * (src/open/openSources.ts); everything else (grouping, acknowledging, text, JSON, the page) is shared.
 */
export interface OpenItem {
  /** Stable across runs and unique across kinds: `<kind>:<key>` (`dead:ref.1001.A-1`, `file:b-2026...`). What `open ack` takes. */
  id: string;
  /** The source's kind (OpenSource.kind). */
  kind: string;
  /** Since when it is open (ms since the epoch): lists are oldest first. */
  since: number;
  /** What it is about, as a person names it: an order key, a file. */
  subject: string;
  /** The batch it belongs to, when it has one. */
  batchId?: string;
  /** Why it is open, in words: items of one kind and cause form one group. */
  cause: string;
  /** The command that resolves it (a person runs it after checking). */
  action: string;
}

/** A person's acknowledgement of an open item: who, why, when (ms). */
export interface OpenAck {
  by: string;
  note: string;
  at: number;
}

/** What sources read from: one record kind's services (orders or accounts), and how its CLI is called. */
export interface OpenDeps {
  services: Services<unknown>;
  /** `bulkorder` or `bulkorder accounts`: the actions name the kind's commands. */
  cli: string;
  now: number;
}

/**
 * One kind of open item: where to find them and what they are called. Adding a kind is adding one of
 * these to OPEN_SOURCES (src/open/openSources.ts).
 */
export interface OpenSource {
  /** Short, stable: the prefix of its items' ids (`dead`, `held`, `file`). */
  kind: string;
  /** Singular and plural, for counts: `dead letter`, `dead letters`. */
  noun: readonly [one: string, many: string];
  /** Every open item of this kind, any order (the caller sorts). Items a later step closed are not open. */
  items(deps: OpenDeps): AsyncIterable<OpenItem> | Promise<OpenItem[]>;
  /**
   * For a kind with an acknowledgement of its own (possible duplicates: `review duplicates ack`): `open ack`
   * closes these items of it (all listed by `items`) that way, so they leave its own list and record who and
   * why where it does, instead of the open list's store. Without it, `open ack` records them in that store.
   */
  acknowledge?(deps: OpenDeps, items: readonly OpenItem[], ack: OpenAck): Promise<void>;
}
