/**
 * A full sync of a partitioned site: one sync per partition, started together, fed each batch's
 * records by their home partition, committed together. Its id joins the partitions' ids, so a
 * client keeps one id and nothing is stored beside the parts.
 *
 * The guard holds for the site as a whole: before any part deletes anything, every part reports
 * what it would delete (a probe: its guard refusing below a share of 0 carries the counts, and it
 * moves nothing on), and only when the sum passes `maxDelete` do the parts move on, each recording
 * the site's guard. An empty input is refused as for one store. Kill-safety: nothing is deleted
 * before every part is committing; a call that stopped after moving some parts on leaves the sync
 * committing, and the next call (the client's, a mirror's retry or its next pass) moves the rest on
 * without a second guard and resumes part after part where it stopped.
 *
 * Across a move (docs/capacity.md "Writes during a move"): a sync started or fed during a move
 * writes to each loc's old home, and a batch's writes to locs being moved are forwarded to their
 * new homes; its commit's deletions reach them through the catch-up before the flip, which waits
 * for a committing sync. A sync begun before a flip is refused from then on, before it deletes anything.
 */

import type { ValidRecord } from "../core/validate.ts";
import { SyncEmptyError, SyncGuardError, SyncNotFoundError, SyncScopeError, SyncStateError, checkSyncGuard } from "../store/errors.ts";
import type {
  CommitOptions,
  RecordStore,
  RecordSync,
  StartOptions,
  SyncCommit,
  SyncInfo,
  SyncScope,
  SyncState,
  SyncSweep,
  UpsertResult,
} from "../store/port.ts";
import { allParts } from "./all-parts.ts";
import { forwardMoving } from "./forward.ts";
import type { PartitionLayout } from "./layout.ts";
import { byPartition } from "./route.ts";
import type { LayoutOf } from "./served.ts";

const SEPARATOR = ".";

function combine(id: string, parts: readonly SyncInfo[]): SyncInfo {
  const states = new Set<SyncState>(parts.map((p) => p.state));
  // A part moves on only once the site's guard has passed (a probe moves none): one part past
  // "open" makes the whole sync committing, finished by the next commit call whoever makes it.
  const state: SyncState = states.has("aborted")
    ? "aborted"
    : states.size === 1 && states.has("committed")
      ? "committed"
      : states.size === 1 && states.has("open")
        ? "open"
        : "committing";
  const total = (of: (p: SyncInfo) => number) => parts.reduce((n, p) => n + of(p), 0);
  return {
    id,
    scope: parts[0]!.scope,
    state,
    maxDelete: parts[0]!.maxDelete,
    startedAt: Math.min(...parts.map((p) => p.startedAt)),
    expiresAt: Math.min(...parts.map((p) => p.expiresAt)),
    received: total((p) => p.received),
    inserted: total((p) => p.inserted),
    updated: total((p) => p.updated),
    unchanged: total((p) => p.unchanged),
    deleted: total((p) => p.deleted),
  };
}

/** The indices of records outside a scope (as each part would refuse them), so that no part writes any. */
function outsideScope(scope: SyncScope, records: readonly ValidRecord[]): number[] {
  const sites = new Set(scope.sites);
  const outside: number[] = [];
  for (const [i, r] of records.entries()) {
    if (!sites.has(r.origin) || (scope.section !== null && r.section !== scope.section && r.sectionDefaulted !== true)) outside.push(i);
  }
  return outside;
}

export class PartitionedSync implements RecordSync {
  readonly parts: readonly RecordSync[];
  /** The partitions' stores, where a batch's writes to locs being moved are forwarded (forward.ts). */
  readonly stores: readonly RecordStore[];
  readonly layoutOf: LayoutOf;

  /** `stores`: every configured partition (each with its sync); a sync spans those that hold records (the layout's `settled`). */
  constructor(stores: readonly RecordStore[], layoutOf: LayoutOf) {
    this.parts = stores.map((s) => s.sync!);
    this.stores = stores;
    this.layoutOf = layoutOf;
  }

  #ids(id: string): string[] {
    const ids = id.split(SEPARATOR);
    if (ids.length > this.parts.length) throw new SyncNotFoundError(`no sync ${id} (never started, or expired and swept)`);
    return ids;
  }

  async #infos(id: string): Promise<SyncInfo[]> {
    const infos = await Promise.all(this.#ids(id).map((part, p) => this.parts[p]!.get(part)));
    if (infos.some((i) => i === null)) throw new SyncNotFoundError(`no sync ${id} (never started, or expired and swept)`);
    return infos as SyncInfo[];
  }

  /**
   * A sync spans the partitions that held records when it began. A flip since then moved some of
   * its records to a database it has no part in: what it received or would delete there is
   * unknown to it, so it is refused whole (before it deletes anything), and a new sync starts.
   */
  async #spanned(id: string): Promise<{ ids: string[]; layout: PartitionLayout }> {
    const ids = this.#ids(id);
    const layout = await this.layoutOf();
    if (ids.length < layout.settled) {
      throw new SyncStateError(
        `sync ${id} began before the site's records moved onto a database added to it (the move has flipped since); nothing was deleted: start a new sync`,
      );
    }
    return { ids, layout };
  }

  async start(scope: SyncScope, options: StartOptions, now = Date.now()): Promise<SyncInfo> {
    const layout = await this.layoutOf();
    // Each part sees the rows its database serves under this layout: while the sync is open, the layout's count stays this one (#spanned).
    const parts = await Promise.all(this.parts.slice(0, layout.settled).map((p) => p.start(scope, { ...options, servedBy: layout.settled }, now)));
    return combine(parts.map((p) => p.id).join(SEPARATOR), parts);
  }

  async get(id: string): Promise<SyncInfo | null> {
    try {
      return combine(id, await this.#infos(id));
    } catch (err) {
      if (err instanceof SyncNotFoundError) return null;
      throw err;
    }
  }

  async upsert(id: string, records: readonly ValidRecord[], now?: number): Promise<UpsertResult> {
    const infos = await this.#infos(id);
    const info = combine(id, infos);
    if (info.state !== "open") throw new SyncStateError(`sync ${id} is ${info.state}, not open`);
    const outside = outsideScope(info.scope, records);
    if (outside.length > 0) throw new SyncScopeError(`${outside.length} of the records are outside this sync's scope`, outside);
    const { ids, layout } = await this.#spanned(id);
    const byHome = byPartition(records, (r) => r.loc, layout);
    const groups: ValidRecord[][] = ids.map((_, p) => byHome.get(p) ?? []);
    // Every part, even one given no record, so that every part's expiry moves on together.
    const results = await allParts(groups.map((group, p) => this.parts[p]!.upsert(ids[p]!, group, now)));
    // During a move, what a batch wrote to a loc being moved goes to its new home too (forward.ts).
    await forwardMoving(
      this.stores,
      records.map((r) => r.loc),
      layout,
    );
    const total = (of: (r: UpsertResult) => number) => results.reduce((n, r) => n + of(r), 0);
    return {
      atomic: results.filter((_, p) => groups[p]!.length > 0).length <= 1,
      writes: total((r) => r.writes),
      inserted: total((r) => r.inserted),
      updated: total((r) => r.updated),
      unchanged: total((r) => r.unchanged),
    };
  }

  async keep(id: string, locs: readonly string[], now?: number): Promise<number> {
    const { ids, layout } = await this.#spanned(id);
    const byHome = byPartition(locs, (loc) => loc, layout);
    const kept = await allParts([...byHome].map(([p, group]) => this.parts[p]!.keep(ids[p]!, group, now)));
    return kept.reduce((n, k) => n + k, 0);
  }

  async commit(id: string, options: CommitOptions, now?: number): Promise<SyncCommit> {
    const ids = this.#ids(id);
    let infos = await this.#infos(id);
    const first = combine(id, infos);
    if (first.state === "aborted") throw new SyncStateError(`sync ${id} was aborted; start a new one`);
    if (first.state === "committed") return { sync: first, done: true };
    // The guard the site passed at, recorded by every part that moved on; none yet: checked now.
    let passedAt = infos.find((info) => info.state !== "open")?.maxDelete;
    if (passedAt === undefined) {
      // A commit whose deletions began before a flip finishes (the move's catch-up reads on while it runs); one that has not begun is refused.
      await this.#spanned(id);
      if (first.received === 0) throw new SyncEmptyError("this sync received no record: an empty input never empties a scope, so nothing was deleted");
      passedAt = options.maxDelete ?? first.maxDelete;
      // What each part would delete, of how many in its scope: a probe below 0 refuses every part
      // holding records in scope with its counts, and moves none on, whatever it finds.
      const counts = await Promise.all(
        infos.map(async (_, p) => {
          try {
            await this.parts[p]!.commit(ids[p]!, { maxDelete: -1, maxChunks: 0, partOfNonEmpty: true, siteGuard: "probe" }, now);
            return { wouldDelete: 0, inScope: 0 };
          } catch (err) {
            if (err instanceof SyncGuardError) return { wouldDelete: err.wouldDelete, inScope: err.inScope };
            throw err;
          }
        }),
      );
      checkSyncGuard(
        counts.reduce((n, c) => n + c.wouldDelete, 0),
        counts.reduce((n, c) => n + c.inScope, 0),
        passedAt,
      );
    }
    // The site passed (in this call, or in one that stopped after moving a part on): every part
    // still open moves on, so no later call checks the guard again (a part's own share may be
    // above the site's, and a resumed commit must not be refused half-way).
    for (const [p, info] of infos.entries()) {
      if (info.state !== "open") continue;
      await this.parts[p]!.commit(ids[p]!, { maxDelete: passedAt, maxChunks: 0, partOfNonEmpty: true, siteGuard: "passed" }, now);
    }
    // One part per call, within the call's chunk budget: the client commits again until done.
    infos = await this.#infos(id);
    const p = infos.findIndex((info) => info.state !== "committed");
    if (p >= 0) infos[p] = (await this.parts[p]!.commit(ids[p]!, { maxChunks: options.maxChunks, partOfNonEmpty: true }, now)).sync;
    const sync = combine(id, infos);
    return { sync, done: sync.state === "committed" };
  }

  async abort(id: string, now?: number): Promise<SyncInfo> {
    const ids = this.#ids(id);
    const infos = await this.#infos(id);
    if (infos.some((i) => i.state === "committing" || i.state === "committed")) {
      throw new SyncStateError(`sync ${id} is ${combine(id, infos).state === "committed" ? "committed" : "committing"}; it cannot be aborted`);
    }
    return combine(id, await Promise.all(infos.map((info, p) => (info.state === "open" ? this.parts[p]!.abort(ids[p]!, now) : info))));
  }

  /** The site's syncs: parts started together share their start time and scope. */
  async active(origin: string): Promise<SyncInfo[]> {
    const lists = await Promise.all(this.parts.map((p) => p.active(origin)));
    const key = (i: SyncInfo) => `${i.startedAt} ${JSON.stringify(i.scope)}`;
    const out: SyncInfo[] = [];
    for (const head of lists[0] ?? []) {
      const found = lists.map((list) => list.find((i) => key(i) === key(head)));
      // A sync spans the partitions that held records when it started: a prefix of them.
      const end = found.indexOf(undefined);
      const parts = (end < 0 ? found : found.slice(0, end)) as SyncInfo[];
      out.push(combine(parts.map((i) => i.id).join(SEPARATOR), parts));
    }
    return out;
  }

  /** Each partition's syncs in turn, within the one statement budget. */
  async sweep(now: number, keepMs: number, maxStatements: number): Promise<SyncSweep> {
    const out: SyncSweep = { expired: 0, finished: 0, forgotten: 0, seenRows: 0, statements: 0, moreLeft: false };
    for (const part of this.parts) {
      if (out.statements >= maxStatements) return { ...out, moreLeft: true };
      const swept = await part.sweep(now, keepMs, maxStatements - out.statements);
      out.expired += swept.expired;
      out.finished += swept.finished;
      out.forgotten += swept.forgotten;
      out.seenRows += swept.seenRows;
      out.statements += swept.statements;
      out.moreLeft ||= swept.moreLeft;
    }
    return out;
  }
}
