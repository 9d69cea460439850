/**
 * Before anything of an origin is sent, the Worker is asked whether it is a configured site. For a
 * local target (autoRehost) a foreign origin switches the import to the Worker's own origin: a
 * local preview.
 */
import { normalizeLoc } from "../../src/core/url.ts";
import type { AdminClient } from "./client.ts";
import type { ImportOptions } from "./options.ts";
import type { Progress } from "./progress.ts";
import { Stop } from "./stop.ts";
import type { ImportSummary } from "./summary.ts";
import type { Entry } from "./walk.ts";

/** Past this many sites, stop asking: the Worker's own `site` rule (a 422) still guards each batch. */
const MAX_PROBED = 100;

export class SiteCheck {
  readonly #client: AdminClient;
  readonly #options: ImportOptions;
  readonly #summary: ImportSummary;
  readonly #progress: Progress;
  readonly #probed = new Set<string>();

  constructor(client: AdminClient, options: ImportOptions, summary: ImportSummary, progress: Progress) {
    this.#client = client;
    this.#options = options;
    this.#summary = summary;
    this.#progress = progress;
  }

  /** Asks the Worker whether `origin` is a configured site: true yes, false no; throws for other trouble. */
  async #probe(origin: string): Promise<boolean> {
    const client = this.#client;
    const answer = await client.request("GET", `sitemap-admin/urls?loc=${encodeURIComponent(`${origin}/robots.txt`)}`);
    const json = answer.json as { error?: string; message?: string; issues?: { rule: string; message: string }[] } | null;
    if (answer.status === 401 || answer.status === 403)
      throw new Stop(3, `${client.endpoint("sitemap-admin/urls")}: the token was rejected (${answer.status})`);
    // Not a site of this host: 404 with rule `site` (an older Worker: 422 with it).
    if ((answer.status === 404 || answer.status === 422) && json?.issues?.some((i) => i.rule === "site")) return false;
    if (answer.status === 404 && json?.error !== "not_found") {
      throw new Stop(
        3,
        `${client.endpoint("sitemap-admin/urls")} answered 404: no admin API there (is ADMIN_TOKEN set for the Worker, and is the URL a configured site?)`,
      );
    }
    if (answer.status !== 200 && answer.status !== 404)
      throw new Stop(3, `${client.endpoint("sitemap-admin/urls")} answered ${answer.status}: ${json?.message ?? answer.text.slice(0, 200)}`);
    this.#probed.add(origin);
    return true;
  }

  /** Makes sure every origin is a configured site before anything of it is sent. */
  async ensure(list: Iterable<string>): Promise<void> {
    const { url, autoRehost } = this.#options;
    const target = new URL(url).origin;
    for (const origin of list) {
      if (this.#probed.has(origin) || this.#probed.size >= MAX_PROBED || (await this.#probe(origin))) continue;
      if (autoRehost && this.#summary.rehostedTo === null) {
        if (!this.#probed.has(target) && !(await this.#probe(target))) throw new Stop(1, `neither ${origin} nor ${target} is a configured site of ${url}`);
        this.#summary.rehostedTo = target;
        this.#progress.message(
          `note: ${origin} is not a configured site of this local Worker: every loc is imported under ${target} for a local preview ` +
            `(--origin picks another origin; --remote imports into a deployed Worker unchanged)`,
        );
        return;
      }
      const hint =
        this.#summary.rehostedTo !== null
          ? ""
          : ` Add it to the Worker's SITES, or pass --origin <a configured origin> to import the paths under that origin.`;
      throw new Stop(1, `${origin} is not a configured site of ${url}: nothing from it can be imported.${hint}`);
    }
  }
}

/** Origins of raw inputs (locs that normalise), for deciding before validation. */
export function rawOrigins(batch: readonly Entry[]): Set<string> {
  const out = new Set<string>();
  for (const e of batch) {
    const loc = e.input["loc"];
    if (typeof loc !== "string") continue;
    const n = normalizeLoc(loc);
    if (n.ok) out.add(n.origin);
  }
  return out;
}
