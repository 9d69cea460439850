/**
 * The mirror's two ports in memory, for a pass over 10,000 documents that real D1 would make take
 * minutes: what the pass decides (budgets, cursors, verification) is under test, not D1 (its
 * adapters are tested with the 1,000-document index and in sync.test.ts). Semantics as the ports
 * document them: a sync notes what it received as seen, and its commit deletes the scope's live
 * records it did not see; no guard (the passes here delete nothing).
 */
import type { ValidRecord } from "../../../src/core/validate.ts";
import type { ChildRead, MirrorChild, MirrorState, MirrorStateStore, Validators } from "../../../src/mirror/store.ts";
import { SyncEmptyError } from "../../../src/store/errors.ts";
import type { RecordSync, SyncCommit, SyncInfo, SyncScope, UpsertResult } from "../../../src/store/port.ts";

export class MemoryMirrorState implements MirrorStateStore {
  readonly owner = "";
  readonly #states = new Map<string, MirrorState>();
  readonly #children = new Map<string, MirrorChild[]>();

  async load(url: string) {
    const s = this.#states.get(url);
    return s === undefined ? null : structuredClone(s);
  }
  async loadMany(urls: readonly string[]) {
    return new Map(urls.flatMap((url) => (this.#states.has(url) ? [[url, structuredClone(this.#states.get(url)!)] as const] : [])));
  }
  async save(state: MirrorState, reads: readonly ChildRead[] = []) {
    this.#states.set(state.url, structuredClone(state));
    for (const read of reads) await this.setChildRead(state.url, read.n, read.validators, read.digest, read.readAt);
  }
  async setChildren(url: string, children: readonly string[]) {
    this.#children.set(
      url,
      children.map((child) => ({ url: child, validators: { etag: null, lastModified: null }, digest: null, readAt: null })),
    );
  }
  async child(url: string, n: number) {
    const c = this.#children.get(url)?.[n];
    return c === undefined ? null : { ...c };
  }
  async children(url: string, from: number, limit: number) {
    return (this.#children.get(url) ?? []).slice(from, from + limit).map((c) => ({ ...c }));
  }
  async setChildRead(url: string, n: number, validators: Validators, digest: string, readAt: number) {
    const c = this.#children.get(url)?.[n];
    if (c !== undefined) Object.assign(c, { validators, digest, readAt });
  }
  async forgetChildReads(url: string) {
    for (const c of this.#children.get(url) ?? []) Object.assign(c, { validators: { etag: null, lastModified: null }, digest: null, readAt: null });
  }
  async childCount(url: string) {
    return this.#children.get(url)?.length ?? 0;
  }
}

export class MemorySync implements RecordSync {
  /** Live records by loc, with who brought them. */
  readonly live = new Map<string, string | null>();
  readonly #syncs = new Map<string, SyncInfo & { seen: Set<string> }>();

  async start(scope: SyncScope, options: { maxDelete: number; ttlMs: number }, now = Date.now()) {
    const id = crypto.randomUUID();
    const info = { id, scope, state: "open" as const, maxDelete: options.maxDelete, startedAt: now, expiresAt: now + options.ttlMs };
    this.#syncs.set(id, { ...info, received: 0, inserted: 0, updated: 0, unchanged: 0, deleted: 0, seen: new Set() });
    return (await this.get(id))!;
  }
  async get(id: string) {
    const s = this.#syncs.get(id);
    if (s === undefined) return null;
    const { seen: _, ...info } = s;
    return { ...info };
  }
  async upsert(id: string, records: readonly ValidRecord[]): Promise<UpsertResult> {
    const s = this.#syncs.get(id)!;
    let inserted = 0;
    for (const r of records) {
      s.seen.add(r.loc);
      if (!this.live.has(r.loc)) {
        this.live.set(r.loc, s.scope.source);
        inserted += 1;
      }
    }
    s.received += records.length;
    s.inserted += inserted;
    s.unchanged += records.length - inserted;
    return { atomic: true, writes: inserted, inserted, updated: 0, unchanged: records.length - inserted } as UpsertResult;
  }
  async keep(id: string, locs: readonly string[]) {
    const s = this.#syncs.get(id)!;
    for (const loc of locs) s.seen.add(loc);
    s.received += locs.length;
    return locs.filter((loc) => this.live.has(loc)).length;
  }
  async commit(id: string): Promise<SyncCommit> {
    const s = this.#syncs.get(id)!;
    if (s.received === 0) throw new SyncEmptyError("empty");
    for (const [loc, source] of this.live) {
      if (source === s.scope.source && !s.seen.has(loc)) {
        this.live.delete(loc);
        s.deleted += 1;
      }
    }
    s.state = "committed";
    return { sync: (await this.get(id))!, done: true };
  }
  async abort(id: string) {
    const s = this.#syncs.get(id)!;
    s.state = "aborted";
    return (await this.get(id))!;
  }
  async active() {
    return [];
  }
  async sweep() {
    return { expired: 0, finished: 0, forgotten: 0, seenRows: 0, statements: 0, moreLeft: false };
  }
}
