/**
 * Sending valid records: one `PUT /sitemap-admin/urls` per batch (the client retries network
 * errors, 429 and 5xx). A batch over the server's limits (413) is halved until it fits; records the
 * server rejects (422) are reported, and with --skip-invalid the rest of the batch is sent again.
 */
import type { ValidationIssue } from "../../src/core/errors.ts";
import type { AdminClient } from "./client.ts";
import type { ImportOptions } from "./options.ts";
import { type Problems, issueText } from "./problems.ts";
import { Stop } from "./stop.ts";
import type { ImportSummary } from "./summary.ts";
import type { Valid } from "./validate.ts";

export class Sender {
  readonly #client: AdminClient;
  readonly #options: ImportOptions;
  readonly #summary: ImportSummary;
  readonly #problems: Problems;
  /** Origins of batches that changed something (what a regeneration should cover). */
  readonly changedOrigins = new Set<string>();
  /** Where batches go: the records endpoint, or a sync's (--sync). */
  path = "sitemap-admin/urls";

  constructor(client: AdminClient, options: ImportOptions, summary: ImportSummary, problems: Problems) {
    this.#client = client;
    this.#options = options;
    this.#summary = summary;
    this.#problems = problems;
  }

  /** The NDJSON line of a record: what the core normalised, the section only when one was given. */
  #payload(v: Valid): Record<string, unknown> {
    const r = v.record;
    const out: Record<string, unknown> = { loc: r.loc };
    if (r.lastmod) out["lastmod"] = r.lastmod;
    if (r.changefreq) out["changefreq"] = r.changefreq;
    if (r.priority !== null && r.priority !== undefined) out["priority"] = r.priority;
    const section = v.input["section"];
    if (this.#options.section !== undefined || (section !== undefined && section !== null && section !== "")) out["section"] = r.section;
    if (r.ext) Object.assign(out, r.ext);
    return out;
  }

  async send(entries: Valid[], retryWithoutBad = this.#options.skipInvalid): Promise<void> {
    if (entries.length === 0) return;
    const summary = this.#summary;
    const body = `${entries.map((e) => JSON.stringify(this.#payload(e))).join("\n")}\n`;
    const answer = await this.#client.request("PUT", this.path, body);
    summary.retries = this.#client.retried;
    const json = answer.json as Record<string, unknown> | null;
    if (answer.status === 200 && json) {
      if (Number(json["inserted"] ?? 0) + Number(json["updated"] ?? 0) > 0) for (const e of entries) this.changedOrigins.add(e.record.origin);
      summary.batches += 1;
      summary.sent += entries.length;
      summary.inserted += Number(json["inserted"] ?? 0);
      summary.updated += Number(json["updated"] ?? 0);
      summary.unchanged += Number(json["unchanged"] ?? 0);
      return;
    }
    if (answer.status === 413 && entries.length > 1) {
      // Over the server's limits: halve until it fits.
      const half = Math.ceil(entries.length / 2);
      await this.send(entries.slice(0, half), retryWithoutBad);
      await this.send(entries.slice(half), retryWithoutBad);
      return;
    }
    if (answer.status === 413) {
      this.#problems.report(`${entries[0]!.source}:${entries[0]!.line}`, "record is larger than the server accepts in one request [payload_too_large]");
      return;
    }
    if (answer.status === 422 && Array.isArray(json?.["issues"])) {
      const bad = new Set<number>();
      for (const issue of json["issues"] as ValidationIssue[]) {
        const entry = entries[issue.index ?? -1];
        if (!entry) continue;
        this.#problems.report(`${entry.source}:${entry.line}`, `${issueText(issue)} (rejected by the server)`, !bad.has(issue.index!));
        bad.add(issue.index!);
      }
      if (!retryWithoutBad)
        throw new Stop(1, `the server rejected a batch (${String(json["message"])}); stopped: batches before it were written, nothing after`);
      await this.send(
        entries.filter((_, i) => !bad.has(i)),
        false,
      );
      return;
    }
    if (answer.status === 401 || answer.status === 403) throw new Stop(3, `the token was rejected (${answer.status})`);
    throw new Stop(3, `PUT ${this.#client.endpoint(this.path)} answered ${answer.status}: ${String(json?.["message"] ?? answer.text.slice(0, 200))}`);
  }
}
