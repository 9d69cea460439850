/**
 * `--sync`: the client side of a full sync (POST /sitemap-admin/syncs, docs/sync.md). The import
 * starts a sync for its scope, sends every batch under it, and commits only after the whole input
 * was sent: a killed import never commits, so it deletes nothing (its sync expires on the server).
 */
import type { AdminClient, ApiAnswer } from "./client.ts";
import type { Progress } from "./progress.ts";
import { Stop } from "./stop.ts";

interface SyncAnswer {
  id: string;
  deleted: number;
  done?: boolean;
}

function messageOf(answer: ApiAnswer): string {
  const json = answer.json as { message?: unknown } | null;
  return typeof json?.message === "string" ? json.message : answer.text.slice(0, 200);
}

export class SyncSession {
  readonly #client: AdminClient;
  readonly id: string;

  private constructor(client: AdminClient, id: string) {
    this.#client = client;
    this.id = id;
  }

  /** Starts a sync of `sites` (narrowed to `section` when given). */
  static async start(client: AdminClient, scope: { sites: string[]; section?: string; maxDelete: number }): Promise<SyncSession> {
    const body = JSON.stringify({ sites: scope.sites, ...(scope.section === undefined ? {} : { section: scope.section }), maxDelete: scope.maxDelete });
    const answer = await client.request("POST", "sitemap-admin/syncs", body, "application/json");
    if (answer.status === 201) return new SyncSession(client, (answer.json as SyncAnswer).id);
    if (answer.status === 401 || answer.status === 403) throw new Stop(3, `the token was rejected (${answer.status})`);
    if (answer.status === 501) throw new Stop(3, `the Worker cannot sync: ${messageOf(answer)}`);
    throw new Stop(3, `POST ${client.endpoint("sitemap-admin/syncs")} answered ${answer.status}: ${messageOf(answer)}`);
  }

  /** Where the batches of this sync go (PUT, like sitemap-admin/urls). */
  get path(): string {
    return `sitemap-admin/syncs/${encodeURIComponent(this.id)}/urls`;
  }

  /**
   * Commits, again and again while the server answers 202 (its per-request budget), and returns
   * how many records were deleted. A refusal (the guard, an empty sync) stops the import with the
   * server's words; nothing was deleted then.
   */
  async commit(progress: Progress): Promise<number> {
    const path = `sitemap-admin/syncs/${encodeURIComponent(this.id)}/commit`;
    for (;;) {
      const answer = await this.#client.request("POST", path);
      const json = answer.json as (SyncAnswer & { error?: string; wouldDelete?: number }) | null;
      if (answer.status === 200 && json) return json.deleted;
      if (answer.status === 202 && json) {
        progress.message(`deleting: ${json.deleted.toLocaleString("en-US")} so far`);
        continue;
      }
      if (answer.status === 409 && json?.error === "delete_guard") {
        // The server keeps the sync open for a larger maxDelete; this import ends it instead.
        const refusal = messageOf(answer).split(": nothing was deleted")[0];
        throw new Stop(1, `${refusal}. Nothing was deleted. If that many records really left, run again with --max-delete (e.g. --max-delete 100%)`);
      }
      if (answer.status === 422 && json?.error === "empty_sync") throw new Stop(1, messageOf(answer));
      throw new Stop(3, `POST ${this.#client.endpoint(path)} answered ${answer.status}: ${messageOf(answer)}`);
    }
  }

  /** Best effort: ends the sync without deleting anything (if this fails, the sync expires on the server). */
  async abort(): Promise<void> {
    try {
      await this.#client.request("DELETE", `sitemap-admin/syncs/${encodeURIComponent(this.id)}`);
    } catch {
      // The server deletes nothing without a commit; the sync expires there.
    }
  }
}
