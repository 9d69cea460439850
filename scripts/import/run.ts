/**
 * The import: walk the input (following sitemap indexes), validate every record locally with the
 * core validator, and send valid records in batches to `PUT /sitemap-admin/urls`.
 *
 * Default mode is all-or-nothing for invalid input: a first pass validates the whole input and
 * nothing is sent if any line is bad; a second pass sends. `--skip-invalid` sends in one pass
 * and skips (and reports) bad lines. `--dry-run` is the first pass alone.
 */
import { RecordValidationError, type ValidationIssue } from "../../src/core/errors.ts";
import { DEFAULT_SECTION } from "../../src/core/limits.ts";
import { normalizeLoc, normalizeOrigin } from "../../src/core/url.ts";
import { type ValidRecord, type ValidationContext, validateBatch } from "../../src/core/validate.ts";
import { AdminClient, ClientError } from "./client.ts";
import { InputError, type Opened, openInput, resolveShard } from "./input.ts";
import { Progress, type ProgressStream } from "./progress.ts";
import { type Format, detectFormat, readItems } from "./readers.ts";

export interface ImportOptions {
  input: string;
  format?: Format;
  dryRun: boolean;
  skipInvalid: boolean;
  /** Worker base URL. */
  url: string;
  token?: string;
  /** Only these origins are accepted locally (otherwise the server's SITES decide). */
  sites?: string[];
  /** Section for records without one (otherwise the server's DEFAULT_SECTION). */
  section?: string;
  /** Rewrite every loc (and same-origin hreflang hrefs) to this origin. */
  origin?: string;
  /**
   * Local preview: when the input's origin is not a configured site of the (local) Worker, import
   * every loc under the Worker's own origin instead of stopping.
   */
  autoRehost: boolean;
  /** After a successful import that changed something, POST /sitemap-admin/regenerate. */
  regenerate: boolean;
  batchSize: number;
  maxBatchBytes: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  noFetch: boolean;
  progressMs: number;
  quiet: boolean;
  /** Most bad lines printed (all are counted). */
  maxReported: number;
  /**
   * Skip duplicate detection across batches (it keeps every loc in memory, ~125 bytes each);
   * duplicates within one batch are still rejected.
   */
  noDedupe?: boolean;
}

export interface ImportSummary {
  input: string;
  mode: "dry-run" | "import" | "import (skip invalid)";
  /** Valid records read (per pass). */
  records: number;
  /** Lines or records rejected locally or by the server. */
  invalid: number;
  sent: number;
  inserted: number;
  updated: number;
  unchanged: number;
  batches: number;
  retries: number;
  /** Elements not imported (not in the record model), by element name. */
  dropped: Record<string, number>;
  /** Origin every loc was rewritten to (--origin, or a local preview), if any. */
  rehostedTo: string | null;
  /** Whether POST /sitemap-admin/regenerate ran (null: not attempted). */
  regenerated: boolean | null;
  elapsedMs: number;
}

export interface ImportResult {
  summary: ImportSummary;
  /** 0 ok; 1 invalid input (reported); 3 the server or network failed. */
  exitCode: 0 | 1 | 3;
}

/** Every origin is acceptable: the server's SITES decide. */
class AnySite extends Set<string> {
  override has(): boolean {
    return true;
  }
}

const MAX_SHARD_DEPTH = 3;

interface Entry {
  source: string;
  line: number;
  input: Record<string, unknown>;
}

interface Valid extends Entry {
  record: ValidRecord;
}

/** Stops the import: the message is printed, the exit code returned. */
class Stop extends Error {
  readonly exitCode: 1 | 3;
  constructor(exitCode: 1 | 3, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}

interface Level {
  opened: Opened;
  shardsDone: number;
  shardsTotal: number | undefined;
}

function fractionOf(levels: readonly Level[], i = 0): number | undefined {
  const level = levels[i];
  if (level === undefined) return undefined;
  if (level.shardsTotal !== undefined) {
    if (level.shardsTotal === 0) return 1;
    return (level.shardsDone + (fractionOf(levels, i + 1) ?? 0)) / level.shardsTotal;
  }
  return level.opened.size ? level.opened.consumed() / level.opened.size : undefined;
}

/** Rough size of a record's NDJSON line, cheap to compute (only extensions are serialised). */
function approximateBytes(input: Record<string, unknown>): number {
  const loc = input["loc"];
  let bytes = 120 + (typeof loc === "string" ? loc.length : 0);
  for (const key of ["images", "videos", "news", "alternates"]) if (input[key] !== undefined) bytes += JSON.stringify(input[key]).length;
  return bytes;
}

function rehost(input: Record<string, unknown>, origin: string): Record<string, unknown> {
  const loc = input["loc"];
  if (typeof loc !== "string") return input;
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(loc);
  if (match === null) return input;
  const from = match[0];
  const out: Record<string, unknown> = { ...input, loc: origin + loc.slice(from.length) };
  if (Array.isArray(input["alternates"])) {
    out["alternates"] = input["alternates"].map((a: unknown) => {
      const href = (a as { href?: unknown })?.href;
      return typeof href === "string" && href.startsWith(from) ? { ...(a as object), href: origin + href.slice(from.length) } : a;
    });
  }
  return out;
}

export async function runImport(options: ImportOptions, stderr: ProgressStream): Promise<ImportResult> {
  const started = performance.now();
  const progress = new Progress(stderr, options.progressMs, options.quiet);
  const summary: ImportSummary = {
    input: options.input,
    mode: options.dryRun ? "dry-run" : options.skipInvalid ? "import (skip invalid)" : "import",
    records: 0,
    invalid: 0,
    sent: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    batches: 0,
    retries: 0,
    dropped: {},
    rehostedTo: options.origin ?? null,
    regenerated: null,
    elapsedMs: 0,
  };
  const dropFirst = new Map<string, string>();
  let reported = 0;
  /** Reports a problem; `count` false for a further issue of a line already counted. */
  const report = (where: string, message: string, count = true): void => {
    if (count) summary.invalid += 1;
    reported += 1;
    if (reported <= options.maxReported) progress.message(`${where}: ${message}`);
    else if (reported === options.maxReported + 1) progress.message(`… more invalid lines are counted but not shown (--max-reported ${options.maxReported})`);
  };
  const issueText = (i: Pick<ValidationIssue, "field" | "message" | "rule">): string => `${i.field}: ${i.message} [${i.rule}]`;

  const sites = options.sites ? new Set(options.sites) : options.origin ? new Set([options.origin]) : new AnySite();
  const ctx: ValidationContext = { sites, defaultSection: options.section ?? DEFAULT_SECTION };
  const client = new AdminClient({
    url: options.url,
    token: options.token ?? "",
    retries: options.retries,
    baseDelayMs: options.retryBaseMs,
    maxDelayMs: options.retryMaxMs,
    onRetry: ({ attempt, delayMs, reason }) => progress.message(`retry ${attempt}/${options.retries} in ${delayMs} ms (${reason})`),
  });

  // ---- walking the input -------------------------------------------------------------------
  const levels: Level[] = [];
  const visited = new Set<string>();

  async function* walk(spec: string, format: Format | undefined, depth: number): AsyncGenerator<Entry> {
    visited.add(spec);
    const opened = await openInput(spec);
    const level: Level = { opened, shardsDone: 0, shardsTotal: undefined };
    levels.push(level);
    if (depth === 0 && opened.size !== undefined) progress.sized();
    try {
      const fmt = format ?? detectFormat(spec, opened.head);
      const shards: { loc: string; line: number }[] = [];
      const dropped = (element: string, line: number): void => {
        summary.dropped[element] = (summary.dropped[element] ?? 0) + 1;
        if (!dropFirst.has(element)) dropFirst.set(element, `${spec}:${line}`);
      };
      for await (const item of readItems(opened, fmt, dropped)) {
        if (item.error !== undefined) report(`${spec}:${item.line}`, item.error);
        else if (item.sitemap !== undefined) shards.push({ loc: item.sitemap, line: item.line });
        else yield { source: spec, line: item.line, input: item.input! };
      }
      if (shards.length === 0) return;
      level.shardsTotal = shards.length;
      for (const shard of shards) {
        let target: string;
        try {
          target = resolveShard(shard.loc, opened, options.noFetch);
        } catch (err) {
          if (!(err instanceof InputError)) throw err;
          report(`${spec}:${shard.line}`, err.message);
          level.shardsDone += 1;
          continue;
        }
        if (visited.has(target)) report(`${spec}:${shard.line}`, `sitemap ${shard.loc} was already read (a loop or a repeat): skipped`);
        else if (depth >= MAX_SHARD_DEPTH) report(`${spec}:${shard.line}`, `sitemap indexes nested more than ${MAX_SHARD_DEPTH} deep: ${shard.loc} skipped`);
        else {
          try {
            yield* walk(target, undefined, depth + 1);
          } catch (err) {
            // An unreadable or broken shard is reported on the index line that lists it; the
            // other shards are still read (and in the default mode nothing is sent anyway).
            if (!(err instanceof InputError)) throw err;
            report(`${spec}:${shard.line}`, err.message);
          }
        }
        level.shardsDone += 1;
      }
    } finally {
      levels.pop();
    }
  }

  // ---- validation --------------------------------------------------------------------------
  const sourceIds = new Map<string, number>();
  const sourceNames: string[] = [];
  const sourceId = (s: string): number => {
    let id = sourceIds.get(s);
    if (id === undefined) {
      id = sourceNames.push(s) - 1;
      sourceIds.set(s, id);
    }
    return id;
  };
  let seen = new Map<string, number>();
  const origins = new Set<string>();

  /** Valid entries of a batch; reports the others (core rules, then duplicates across batches). */
  function validate(batch: readonly Entry[]): Valid[] {
    const to = summary.rehostedTo;
    const inputs = batch.map((e) => (to !== null ? rehost(e.input, to) : e.input));
    let indices = batch.map((_, i) => i);
    let records: ValidRecord[] = [];
    // Removing bad records can leave a variant whose hreflang partner was removed: re-check.
    // Each round removes at least one record, so this ends.
    while (indices.length > 0) {
      try {
        records = validateBatch(
          indices.map((i) => inputs[i]),
          ctx,
        );
        break;
      } catch (err) {
        if (!(err instanceof RecordValidationError)) throw err;
        const bad = new Set<number>();
        for (const issue of err.issues) {
          const i = indices[issue.index ?? -1];
          if (i === undefined) continue;
          // The core names the first occurrence by its batch index: name its file and line instead.
          const text = issueText(issue).replace(/\(first at record (\d+)\)/, (whole, n: string) => {
            const first = batch[indices[Number(n)] ?? -1];
            return first ? `(first at ${first.source}:${first.line})` : whole;
          });
          report(`${batch[i]!.source}:${batch[i]!.line}`, text, !bad.has(issue.index!));
          bad.add(issue.index!);
        }
        if (bad.size === 0) throw err;
        indices = indices.filter((_, k) => !bad.has(k));
        records = [];
      }
    }
    const valid: Valid[] = [];
    records.forEach((record, k) => {
      const entry = batch[indices[k]!]!;
      const first = seen.get(record.loc);
      if (first !== undefined) {
        const where = `${sourceNames[Math.floor(first / 2 ** 32)]}:${first % 2 ** 32}`;
        report(`${entry.source}:${entry.line}`, issueText({ field: "loc", rule: "duplicate-loc", message: `loc ${record.loc} appears more than once (first at ${where})` }));
        return;
      }
      if (!options.noDedupe) seen.set(record.loc, sourceId(entry.source) * 2 ** 32 + entry.line);
      origins.add(record.origin);
      valid.push({ ...entry, input: inputs[indices[k]!]!, record });
    });
    return valid;
  }

  // ---- sending -----------------------------------------------------------------------------
  const probed = new Set<string>();
  /** Origins of batches that changed something (what a regeneration should cover). */
  const changedOrigins = new Set<string>();

  /** Asks the Worker whether `origin` is a configured site: true yes, false no; throws for other trouble. */
  async function probe(origin: string): Promise<boolean> {
    const answer = await client.request("GET", `sitemap-admin/urls?loc=${encodeURIComponent(`${origin}/robots.txt`)}`);
    const json = answer.json as { error?: string; message?: string; issues?: { rule: string; message: string }[] } | null;
    if (answer.status === 401 || answer.status === 403) throw new Stop(3, `${client.endpoint("sitemap-admin/urls")}: the token was rejected (${answer.status})`);
    if (answer.status === 404 && json?.error !== "not_found") {
      throw new Stop(3, `${client.endpoint("sitemap-admin/urls")} answered 404: no admin API there (is ADMIN_TOKEN set for the Worker, and is the URL a configured site?)`);
    }
    if (answer.status === 422 && json?.issues?.some((i) => i.rule === "site")) return false;
    if (answer.status !== 200 && answer.status !== 404) throw new Stop(3, `${client.endpoint("sitemap-admin/urls")} answered ${answer.status}: ${json?.message ?? answer.text.slice(0, 200)}`);
    probed.add(origin);
    return true;
  }

  /**
   * Makes sure every origin is a configured site before anything of it is sent. For a local
   * target (autoRehost) a foreign origin switches the import to the Worker's own origin.
   */
  async function ensureOrigins(list: Iterable<string>): Promise<void> {
    const target = new URL(options.url).origin;
    for (const origin of list) {
      // Past 100 sites, stop asking: the Worker's own `site` rule (a 422) still guards each batch.
      if (probed.has(origin) || probed.size >= 100 || (await probe(origin))) continue;
      if (options.autoRehost && summary.rehostedTo === null) {
        if (!probed.has(target) && !(await probe(target))) throw new Stop(1, `neither ${origin} nor ${target} is a configured site of ${options.url}`);
        summary.rehostedTo = target;
        progress.message(
          `note: ${origin} is not a configured site of this local Worker: every loc is imported under ${target} for a local preview ` +
            `(--origin picks another origin; --remote imports into a deployed Worker unchanged)`,
        );
        return;
      }
      const hint = summary.rehostedTo !== null ? "" : ` Add it to the Worker's SITES, or pass --origin <a configured origin> to import the paths under that origin.`;
      throw new Stop(1, `${origin} is not a configured site of ${options.url}: nothing from it can be imported.${hint}`);
    }
  }

  /** Origins of raw inputs (locs that normalise), for deciding before validation. */
  function rawOrigins(batch: readonly Entry[]): Set<string> {
    const out = new Set<string>();
    for (const e of batch) {
      const loc = e.input["loc"];
      if (typeof loc !== "string") continue;
      const n = normalizeLoc(loc);
      if (n.ok) out.add(n.origin);
    }
    return out;
  }

  function payload(v: Valid): Record<string, unknown> {
    const r = v.record;
    const out: Record<string, unknown> = { loc: r.loc };
    if (r.lastmod) out["lastmod"] = r.lastmod;
    if (r.changefreq) out["changefreq"] = r.changefreq;
    if (r.priority !== null && r.priority !== undefined) out["priority"] = r.priority;
    const section = v.input["section"];
    if (options.section !== undefined || (section !== undefined && section !== null && section !== "")) out["section"] = r.section;
    if (r.ext) Object.assign(out, r.ext);
    return out;
  }

  async function send(entries: Valid[], retryWithoutBad = options.skipInvalid): Promise<void> {
    if (entries.length === 0) return;
    const body = `${entries.map((e) => JSON.stringify(payload(e))).join("\n")}\n`;
    const answer = await client.request("PUT", "sitemap-admin/urls", body);
    summary.retries = client.retried;
    const json = answer.json as Record<string, unknown> | null;
    if (answer.status === 200 && json) {
      if (Number(json["inserted"] ?? 0) + Number(json["updated"] ?? 0) > 0) for (const e of entries) changedOrigins.add(e.record.origin);
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
      await send(entries.slice(0, half), retryWithoutBad);
      await send(entries.slice(half), retryWithoutBad);
      return;
    }
    if (answer.status === 413) {
      report(`${entries[0]!.source}:${entries[0]!.line}`, "record is larger than the server accepts in one request [payload_too_large]");
      return;
    }
    if (answer.status === 422 && Array.isArray(json?.["issues"])) {
      const bad = new Set<number>();
      for (const issue of json["issues"] as ValidationIssue[]) {
        const entry = entries[issue.index ?? -1];
        if (!entry) continue;
        report(`${entry.source}:${entry.line}`, `${issueText(issue)} (rejected by the server)`, !bad.has(issue.index!));
        bad.add(issue.index!);
      }
      if (!retryWithoutBad) throw new Stop(1, `the server rejected a batch (${String(json["message"])}); stopped: batches before it were written, nothing after`);
      await send(
        entries.filter((_, i) => !bad.has(i)),
        false,
      );
      return;
    }
    if (answer.status === 401 || answer.status === 403) throw new Stop(3, `the token was rejected (${answer.status})`);
    throw new Stop(3, `PUT ${client.endpoint("sitemap-admin/urls")} answered ${answer.status}: ${String(json?.["message"] ?? answer.text.slice(0, 200))}`);
  }

  /**
   * POST /sitemap-admin/regenerate regenerates the site the request is sent to: the target's own
   * origin. Other sites' sitemaps follow at their next cron run.
   */
  async function regenerate(): Promise<void> {
    const target = new URL(options.url).origin;
    for (const origin of changedOrigins) {
      if (origin !== target) {
        progress.message(`note: ${origin}'s sitemaps update at the Worker's next cron run (or POST ${origin}/sitemap-admin/regenerate)`);
      }
    }
    if (!changedOrigins.has(target)) return;
    let answer;
    try {
      answer = await client.request("POST", "sitemap-admin/regenerate");
    } catch (err) {
      if (!(err instanceof ClientError)) throw err;
      progress.message(`warning: regeneration failed (${err.message}); the records are stored, the cron will pick them up`);
      summary.regenerated = false;
      return;
    }
    summary.regenerated = answer.status === 200;
    if (answer.status === 200) progress.message(`regenerated the sitemaps: ${answer.text.slice(0, 300)}`);
    else if (answer.status === 404) progress.message("this Worker has no POST /sitemap-admin/regenerate: its cron will update the sitemaps");
    else progress.message(`warning: POST /sitemap-admin/regenerate answered ${answer.status}; the records are stored, the cron will pick them up`);
  }

  // ---- one pass ------------------------------------------------------------------------------
  async function pass(label: string, sending: boolean): Promise<void> {
    seen = new Map();
    summary.dropped = {};
    dropFirst.clear();
    let batch: Entry[] = [];
    let batchBytes = 0;
    let count = 0;
    const flush = async (): Promise<void> => {
      // In a one-pass import the first batch decides a local preview's origin before validation.
      if (sending && options.autoRehost && summary.rehostedTo === null) await ensureOrigins(rawOrigins(batch));
      const valid = validate(batch);
      batch = [];
      batchBytes = 0;
      count += valid.length;
      summary.records = count;
      if (sending) {
        await ensureOrigins(new Set(valid.map((v) => v.record.origin)));
        await send(valid);
      }
      progress.update(count, fractionOf(levels));
    };
    progress.phase(label);
    for await (const entry of walk(options.input, options.format, 0)) {
      batch.push(entry);
      batchBytes += approximateBytes(entry.input);
      if (batch.length >= options.batchSize || batchBytes >= options.maxBatchBytes) await flush();
      else if (batch.length % 1000 === 0) progress.update(count + batch.length, fractionOf(levels));
    }
    if (batch.length > 0) await flush();
    progress.done();
  }

  let exitCode: 0 | 1 | 3 = 0;
  try {
    if (options.dryRun) {
      await pass("validating", false);
    } else if (options.skipInvalid) {
      await pass("importing", true);
    } else {
      await pass("validating", false);
      if (summary.invalid === 0) {
        await ensureOrigins(origins);
        visited.clear();
        await pass("importing", true);
      } else {
        progress.message(`${summary.invalid} invalid ${summary.invalid === 1 ? "line" : "lines"}: nothing was sent (fix them, or pass --skip-invalid to import the valid records)`);
      }
    }
    if (summary.invalid > 0) exitCode = 1;
    if (options.regenerate && changedOrigins.size > 0) await regenerate();
  } catch (err) {
    if (err instanceof Stop) {
      progress.message(`error: ${err.message}`);
      exitCode = err.exitCode;
    } else if (err instanceof InputError) {
      progress.message(`error: ${err.message}`);
      exitCode = 1;
    } else if (err instanceof ClientError) {
      progress.message(`error: ${err.message}`);
      exitCode = 3;
    } else {
      throw err;
    }
  }
  for (const [element, count] of Object.entries(summary.dropped)) {
    progress.message(`not imported: ${count} × ${element} (first at ${dropFirst.get(element)}): the record model has no field for it`);
  }
  summary.retries = client.retried;
  summary.elapsedMs = Math.round(performance.now() - started);
  return { summary, exitCode };
}

/** Validates an origin given on the command line. */
export function originArg(raw: string): string | null {
  return normalizeOrigin(raw);
}
