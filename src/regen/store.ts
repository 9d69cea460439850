/**
 * What the regeneration keeps between runs: per-site state and lease, recent run summaries, and
 * snapshots waiting to be deleted. D1 keeps it (src/adapters/d1/regen-store.ts).
 */
import type { ChangeCursor, ScanPosition } from "../store/port.ts";
import type { FailedDocument } from "./failures.ts";
import type { RecentInterval } from "./recent.ts";

/** Per-site progress of the regeneration. */
export interface RegenState {
  /** Change feed position (D1: a commit position, `seq`); null before the first complete pass. */
  cursor: ChangeCursor | null;
  /**
   * Changes past the cursor already handled (key intervals per section and stamp, src/regen/
   * recent.ts), on a stamp-ordered feed (KV): its cursor stays a settle window behind the newest
   * change (a write stamped earlier may still commit), so the next run reads those changes again
   * and skips these. Empty on a commit-ordered one (D1), which reads nothing twice.
   */
  recent: RecentInterval[];
  /** Shards still to re-render, each named by (section, a key in its range). */
  pending: [string, number][];
  /**
   * Changed keys of pending shards the next run may splice (src/regen/splice.ts: one key per changed
   * block); a pending shard without any is re-planned whole. Absent in states saved before it.
   */
  changed?: [string, number][];
  /** A site pass in progress: where the next run resumes it; null when none. */
  pass: ScanPosition | null;
  /** What the manifest's versions were planned with (render options, index form). */
  fingerprint: string;
  /** Documents published without a snapshot because storing it failed, and when to retry. */
  failed: FailedDocument[];
}

export const EMPTY_STATE: RegenState = { cursor: null, recent: [], pending: [], pass: null, fingerprint: "", failed: [] };

export interface RunRecord {
  id: number;
  startedAt: number;
  ok: boolean;
  summary: unknown;
}

export interface Lease {
  id: string;
  until: number;
}

export interface RegenStore {
  /**
   * Takes the site's lease unless another run holds an unexpired one (one taken under the same
   * `name` is the caller's own, taken back); null when busy. Every taking is a new holder: the one
   * it was taken from can no longer save progress or publish.
   */
  acquire(origin: string, now: number, ttlMs: number, name?: string): Promise<Lease | null>;
  release(origin: string, lease: Lease): Promise<void>;
  load(origin: string): Promise<RegenState>;
  /** Saves state while holding `lease`; false when the lease was lost (expired and taken). */
  save(origin: string, lease: Lease, state: RegenState, now: number): Promise<boolean>;
  /** Current lease holder's expiry (0 = free) and state, for the status endpoint. */
  peek(origin: string): Promise<{ state: RegenState; leaseUntil: number; updatedAt: number } | null>;
  recordRun(origin: string, startedAt: number, ok: boolean, summary: unknown): Promise<void>;
  runs(origin: string, limit: number): Promise<RunRecord[]>;
  /** A snapshot about to be stored: deleted later unless a published manifest takes it. */
  tentative(origin: string, key: string, now: number): Promise<void>;
  /** Snapshots now referenced by the published manifest: no longer candidates. */
  confirm(keys: readonly string[]): Promise<void>;
  /** Snapshots the published manifest no longer references: deleted after the grace time. */
  supersede(origin: string, keys: readonly string[], now: number): Promise<void>;
  /** Candidates older than `before`, oldest first. */
  due(origin: string, before: number, limit: number): Promise<string[]>;
  forget(keys: readonly string[]): Promise<void>;
}
