/**
 * Documents whose snapshot could not be rendered or stored, kept between runs (RegenState.failed):
 * each is retried by a later run, backing off (1, 2, 4 … minutes, at most 6 hours), and shown by
 * GET /sitemap-admin/status with its error and the time of its next retry. Meanwhile the document
 * is listed and served by live render.
 */
import { type ShardManifest, listedShards } from "../manifest/manifest.ts";

/** A document whose snapshot could not be rendered or stored in this run. */
export interface RunFailure {
  /** `section-n`, or "index". */
  document: string;
  section: string | null;
  /** First key of the shard. */
  key: number;
  error: string;
}

/** An error as shown in the summary and the status (bounded). */
export function describeError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

export interface FailedDocument {
  /** `section-n`, or "index". */
  document: string;
  error: string;
  /** Consecutive runs that failed it. */
  attempts: number;
  /** Last failure and earliest next retry (ms). */
  failedAt: number;
  retryAt: number;
}

const FIRST_DELAY_MS = 60_000;
const MAX_DELAY_MS = 6 * 3600_000;

function retryDelay(attempts: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempts - 1, 20));
}

/** Whether a document's retry time has not come yet (a run then leaves it alone unless it changed). */
export function waiting(failed: readonly FailedDocument[], document: string, now: number): boolean {
  return failed.some((f) => f.document === document && f.retryAt > now);
}

/**
 * The failures to keep after a run: this run's (attempts counted on), and the earlier ones whose
 * document is still published without a snapshot and was not retried.
 */
export function nextFailures(previous: readonly FailedDocument[], run: readonly RunFailure[], manifest: ShardManifest, now: number): FailedDocument[] {
  const before = new Map(previous.map((f) => [f.document, f]));
  const out = new Map<string, FailedDocument>();
  for (const failure of run) {
    const attempts = (before.get(failure.document)?.attempts ?? 0) + 1;
    out.set(failure.document, { document: failure.document, error: failure.error, attempts, failedAt: now, retryAt: now + retryDelay(attempts) });
  }
  const unstored = new Set(listedShards(manifest).flatMap((s) => (s.snapshot ? [] : [`${s.section}-${s.n}`])));
  if (listedShards(manifest).length > 0 && !manifest.snapshot) unstored.add("index");
  for (const f of previous) if (!out.has(f.document) && unstored.has(f.document)) out.set(f.document, f);
  return [...out.values()];
}
