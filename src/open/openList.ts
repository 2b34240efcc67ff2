import { localTime } from '../timeText.js';
import type { OpenAck, OpenDeps, OpenItem, OpenSource } from './openItem.js';
import { OPEN_SOURCES } from './openSources.js';

export type { OpenAck } from './openItem.js';

/** Items of one kind with one cause, oldest first. */
export interface OpenGroup {
  kind: string;
  cause: string;
  /** What resolves each of them (the first item's action; the group's share it but for the key). */
  action: string;
  count: number;
  oldest: number;
  items: OpenItem[];
}

/** What is still open, grouped by kind and cause, oldest group first; acknowledged items apart. */
export interface OpenList {
  total: number;
  /** Per source kind, how many are open (every kind listed, 0 included). */
  counts: Record<string, number>;
  groups: OpenGroup[];
  /** Items a person acknowledged (`open ack`), with who and why; not counted in `total`. */
  acknowledged: (OpenItem & { ack: OpenAck })[];
}

/** Reads every source (OPEN_SOURCES unless given), sets acknowledged items apart, groups the rest. */
export async function readOpen(deps: OpenDeps, sources: readonly OpenSource[] = OPEN_SOURCES): Promise<OpenList> {
  const acks = await readAcks(deps);
  const counts: Record<string, number> = {};
  const open: OpenItem[] = [];
  const acknowledged: OpenList['acknowledged'] = [];
  const seen = new Set<string>();
  const carried: { acknowledge: NonNullable<OpenSource['acknowledge']>; item: OpenItem; ack: OpenAck }[] = [];
  for (const source of sources) {
    const { acknowledge } = source;
    let count = 0;
    const found = source.items(deps);
    const items = Symbol.asyncIterator in found ? await collect(found) : await found;
    for (const item of items) {
      seen.add(item.id);
      const ack = acks.get(item.id);
      if (ack !== undefined && acknowledge !== undefined) carried.push({ acknowledge, item, ack });
      else if (ack !== undefined) acknowledged.push({ ...item, ack });
      else {
        open.push(item);
        count++;
      }
    }
    counts[source.kind] = count;
  }
  // An acknowledgement outlives nothing it acknowledged: closed or purged items take theirs along.
  const stale = [...acks.keys()].filter((id) => !seen.has(id));
  if (stale.length > 0 && sources === OPEN_SOURCES)
    await deps.services.redis.hdel(deps.services.keys.openAcks, ...stale);
  // Acknowledged in this store before their kind closed its own (`open ack` of a possible duplicate, before
  // issue 33): closed now as their kind does, with the same who, why and when; then no longer open.
  for (const { acknowledge, item, ack } of carried) await acknowledge(deps, [item], ack);
  if (carried.length > 0)
    await deps.services.redis.hdel(deps.services.keys.openAcks, ...carried.map(({ item }) => item.id));
  const groups = new Map<string, OpenGroup>();
  for (const item of open.sort((a, b) => a.since - b.since)) {
    const id = `${item.kind}\u0000${item.cause}`;
    let group = groups.get(id);
    if (group === undefined)
      groups.set(
        id,
        (group = { kind: item.kind, cause: item.cause, action: item.action, count: 0, oldest: item.since, items: [] }),
      );
    group.count++;
    group.items.push(item);
  }
  return {
    total: open.length,
    counts,
    groups: [...groups.values()].sort((a, b) => a.oldest - b.oldest),
    acknowledged: acknowledged.sort((a, b) => a.since - b.since),
  };
}

/** What `open ack` did with the ids it was given. */
export interface OpenAckResult {
  /** The ids that were open, acknowledged (an id nothing lists is refused by the caller, not recorded). */
  acknowledged: string[];
  /**
   * Those of them closed by their kind's own acknowledgement (OpenSource.acknowledge: a possible duplicate is
   * off `review duplicates list`, who and why in its batch's history of fixes), not kept in this list's store.
   */
  closed: string[];
}

/**
 * Records that a person looked at these items and decided they need nothing more (who, why, when): in the open
 * list's store, or, for a kind with an acknowledgement of its own, through it (same record as its own command).
 */
export async function acknowledge(
  deps: OpenDeps,
  ids: readonly string[],
  ack: Omit<OpenAck, 'at'>,
): Promise<OpenAckResult> {
  const list = await readOpen(deps);
  const open = new Map(list.groups.flatMap((g) => g.items.map((item) => [item.id, item] as const)));
  const takenItems = [...new Set(ids)].flatMap((id) => {
    const item = open.get(id);
    return item === undefined ? [] : [item];
  });
  const taken = takenItems.map((item) => item.id);
  const full: OpenAck = { ...ack, at: deps.now };
  const kept: string[] = [];
  const closed: string[] = [];
  for (const source of OPEN_SOURCES) {
    const items = takenItems.filter((item) => item.kind === source.kind);
    if (items.length === 0) continue;
    if (source.acknowledge === undefined) kept.push(...items.map((item) => item.id));
    else {
      await source.acknowledge(deps, items, full);
      closed.push(...items.map((item) => item.id));
    }
  }
  if (kept.length > 0) {
    const value = JSON.stringify(full);
    await deps.services.redis.hset(deps.services.keys.openAcks, Object.fromEntries(kept.map((id) => [id, value])));
  }
  return { acknowledged: taken, closed };
}

/** What the CLI and the dashboard say when the list is empty. */
export const NOTHING_OPEN =
  'Nothing needs a person: every dead letter, held order, possible duplicate, refused file and held batch is closed.';

/** `3 dead letters, 1 held batch`: the open counts by kind, in the sources' order, kinds with none left out. */
export function openCounts(list: OpenList, sources: readonly OpenSource[] = OPEN_SOURCES): string {
  return sources
    .filter((s) => (list.counts[s.kind] ?? 0) > 0)
    .map((s) => `${list.counts[s.kind]} ${list.counts[s.kind] === 1 ? s.noun[0] : s.noun[1]}`)
    .join(', ');
}

/** One line for `status`: how many need a person, by kind, and where to look. */
export function openSummary(list: OpenList, cli: string, sources: readonly OpenSource[] = OPEN_SOURCES): string {
  if (list.total === 0) return 'Needs a person: nothing open (the night is done)';
  return `Needs a person: ${list.total} open (${openCounts(list, sources)}), oldest ${groupAge(list)}; see ${cli} open`;
}

/** `bulkorder open` as text: each group with its cause, its action and its oldest items. */
export function openText(
  list: OpenList,
  options: { cli: string; timeZone: string; perGroup: number; sources?: readonly OpenSource[] },
): string {
  const sources = options.sources ?? OPEN_SOURCES;
  const nounOf = (kind: string, n: number) => {
    const noun = sources.find((s) => s.kind === kind)?.noun ?? [kind, kind];
    return n === 1 ? noun[0] : noun[1];
  };
  const lines: string[] = [];
  if (list.total === 0) lines.push(NOTHING_OPEN);
  else lines.push(openSummary(list, options.cli, sources).replace(/; see .*$/, ''));
  for (const group of list.groups) {
    lines.push('', `${group.count} ${nounOf(group.kind, group.count)}: ${group.cause}`);
    lines.push(`  to resolve: ${group.action}`);
    for (const item of group.items.slice(0, options.perGroup))
      lines.push(
        `  ${item.id}  since ${localTime(item.since, options.timeZone)}${item.batchId ? `  batch ${item.batchId}` : ''}${item.subject !== item.id.slice(item.kind.length + 1) ? `  ${item.subject}` : ''}`,
      );
    if (group.count > options.perGroup)
      lines.push(`  ... and ${group.count - options.perGroup} more (--all shows them)`);
  }
  if (list.acknowledged.length > 0)
    lines.push(
      '',
      `${list.acknowledged.length} acknowledged (not counted): ${list.acknowledged
        .slice(0, 5)
        .map((a) => `${a.id} by ${a.ack.by} (${a.ack.note})`)
        .join('; ')}${list.acknowledged.length > 5 ? '; ...' : ''}`,
    );
  if (list.total > 0)
    lines.push('', `Nothing to do for one? ${options.cli} open ack <id> --note "why" records who decided and why.`);
  return lines.join('\n') + '\n';
}

/** `bulkorder open --json`: the list as one object (times as ISO UTC, as every --json). */
export function openJson(list: OpenList): Record<string, unknown> {
  const iso = (at: number) => new Date(at).toISOString();
  return {
    total: list.total,
    counts: list.counts,
    groups: list.groups.map((g) => ({
      kind: g.kind,
      cause: g.cause,
      action: g.action,
      count: g.count,
      oldest: iso(g.oldest),
      items: g.items.map((i) => ({ ...i, since: iso(i.since) })),
    })),
    acknowledged: list.acknowledged.map((a) => ({ ...a, since: iso(a.since), ack: { ...a.ack, at: iso(a.ack.at) } })),
  };
}

async function readAcks(deps: OpenDeps): Promise<Map<string, OpenAck>> {
  const raw = await deps.services.redis.hgetall(deps.services.keys.openAcks);
  const acks = new Map<string, OpenAck>();
  for (const [id, json] of Object.entries(raw)) {
    try {
      acks.set(id, JSON.parse(json) as OpenAck);
    } catch {
      // An unreadable acknowledgement counts as none: the item stays open.
    }
  }
  return acks;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function groupAge(list: OpenList): string {
  const oldest = list.groups[0]?.oldest;
  if (oldest === undefined) return '';
  const hours = Math.floor((Date.now() - oldest) / 3_600_000);
  if (hours >= 48) return `${Math.floor(hours / 24)} days old`;
  return hours >= 1 ? `${hours} h old` : 'under an hour old';
}
