/**
 * A crawler that keeps reading while things happen (a regeneration, a kill, a restart): each round
 * reads the index, every section shard it lists, then the index again. Bodies are kept (once per
 * distinct wire bytes) and judged afterwards, so rounds stay quick while the Worker is busy.
 *
 * What a round proves, afterwards (see verifyRounds): every complete 200 document is valid; one
 * ETag always names the same bytes; and when the index did not change during the round, the shards
 * it lists carry exactly its lastmods and together hold exactly the expected URLs, no duplicates —
 * no half-updated index, no URL missing, at any moment a crawler could have looked.
 */
import { gunzipSync } from "node:zlib";
import { locsOf } from "../../shared/locs.ts";
import { type Check, Validator, sha256 } from "./crawler.ts";
import { type WireResponse, get, header } from "./http.ts";

const SHARD_LOC = /<sitemap><loc>[^<]*?(\/sitemap-[a-z0-9_-]+-[1-9][0-9]*\.xml)<\/loc><lastmod>([^<]*)<\/lastmod><\/sitemap>/g;

interface Seen {
  path: string;
  status: number;
  etag: string;
  lastModified: string;
  /** sha256 of the wire bytes (key into the body store), when complete and 200. */
  body: string | null;
}

export interface Round {
  index: Seen;
  shards: Seen[];
  indexAfter: Seen | null;
}

export interface PollReport {
  rounds: number;
  /** Rounds during which the index stayed the same: checked for consistency and completeness. */
  consistentRounds: number;
  documentsChecked: number;
  /** Requests that found the Worker down or were cut by the kill (not served documents). */
  unavailable: number;
  /** Distinct index versions seen. */
  indexVersions: number;
}

export class Poller {
  readonly rounds: Round[] = [];
  readonly #bodies = new Map<string, Buffer>();
  readonly #port: number;
  unavailable = 0;
  requests = 0;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(port: number) {
    this.#port = port;
  }

  start(): void {
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Resolves once `count` more rounds have completed (reads started after this call). */
  async more(count: number): Promise<void> {
    const target = this.rounds.length + count + 1; // the round in flight may have started earlier
    while (this.#running && this.rounds.length < target) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  /** One request; null when the Worker was down or the transfer was cut (restart in progress). */
  async #fetch(path: string): Promise<Seen | null> {
    this.requests++;
    const res: WireResponse = await get(this.#port, path, { "Accept-Encoding": "gzip" });
    if (res.status === 0 || !res.complete) {
      this.unavailable++;
      return null;
    }
    let body: string | null = null;
    if (res.status === 200) {
      body = sha256(res.body);
      if (!this.#bodies.has(body)) this.#bodies.set(body, res.body);
    }
    return { path, status: res.status, etag: header(res, "etag") ?? "", lastModified: header(res, "last-modified") ?? "", body };
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const index = await this.#fetch("/sitemap.xml");
      if (!index) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const round: Round = { index, shards: [], indexAfter: null };
      let cut = false;
      if (index.body) {
        const xml = this.decoded(index.body).toString();
        for (const m of xml.matchAll(SHARD_LOC)) {
          const shard = await this.#fetch(m[1]!);
          if (!shard) {
            cut = true;
            break;
          }
          round.shards.push(shard);
        }
        if (!cut) round.indexAfter = await this.#fetch("/sitemap.xml");
      }
      this.rounds.push(round);
    }
  }

  decoded(sha: string): Buffer {
    return gunzipSync(this.#bodies.get(sha)!);
  }

  /**
   * Judges every round. `expected`: the URLs the section shards must hold together at any moment
   * (they do not change while polling: the scenario changes records, not which URLs exist).
   */
  async verify(expected: ReadonlySet<string>, check: Check, validator = new Validator()): Promise<PollReport> {
    const report: PollReport = { rounds: this.rounds.length, consistentRounds: 0, documentsChecked: 0, unavailable: this.unavailable, indexVersions: 0 };
    const byEtag = new Map<string, string>();
    const locs = new Map<string, string[]>();
    const indexVersions = new Set<string>();
    const judge = async (seen: Seen, kind: "urlset" | "siteindex"): Promise<void> => {
      check(seen.status === 200, `${seen.path} answered ${seen.status} during the poll`);
      if (!seen.body) return;
      const xml = this.decoded(seen.body);
      const errors = await validator.check(xml, kind);
      check(errors.length === 0, `${seen.path} (ETag ${seen.etag}) served invalid: ${errors.join("; ")}`);
      report.documentsChecked++;
      const digest = sha256(xml);
      const known = byEtag.get(`${seen.path} ${seen.etag}`);
      check(known === undefined || known === digest, `${seen.path}: ETag ${seen.etag} named two different documents`);
      byEtag.set(`${seen.path} ${seen.etag}`, digest);
    };
    for (const round of this.rounds) {
      await judge(round.index, "siteindex");
      indexVersions.add(round.index.etag);
      for (const shard of round.shards) await judge(shard, "urlset");
      if (round.indexAfter) await judge(round.indexAfter, "siteindex");
      if (!round.indexAfter || round.indexAfter.etag !== round.index.etag || !round.index.body) continue;
      // The index stayed put for the whole round: its shards must be exactly the ones it describes.
      report.consistentRounds++;
      const indexXml = this.decoded(round.index.body).toString();
      const lastmods = new Map([...indexXml.matchAll(SHARD_LOC)].map((m) => [m[1]!, m[2]!]));
      const all: string[] = [];
      for (const shard of round.shards) {
        const listed = lastmods.get(shard.path);
        check(
          listed !== undefined && Math.floor(Date.parse(listed) / 1000) === Math.floor(Date.parse(shard.lastModified) / 1000),
          `${shard.path}: index lastmod ${listed} but the shard says Last-Modified ${shard.lastModified} (index ${round.index.etag})`,
        );
        if (!shard.body) continue;
        let urls = locs.get(shard.body);
        if (!urls) locs.set(shard.body, (urls = locsOf(this.decoded(shard.body).toString())));
        all.push(...urls);
      }
      const set = new Set(all);
      check(set.size === all.length, `index ${round.index.etag}: a URL is listed in two shards`);
      const missing = [...expected].filter((u) => !set.has(u));
      const extra = [...set].filter((u) => !expected.has(u));
      check(
        missing.length === 0 && extra.length === 0,
        `index ${round.index.etag}: ${missing.length} URLs missing (${missing.slice(0, 2).join(", ")}), ${extra.length} unexpected`,
      );
    }
    report.indexVersions = indexVersions.size;
    return report;
  }
}
