/** Command line of `npm run import` (see docs/ingest.md). */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SECTION_PATTERN } from "../../src/core/limits.ts";
import { normalizeOrigin } from "../../src/core/url.ts";
import { DEFAULT_LOCAL_ORIGIN, LOCAL_SERVER_FILE, recordedLocalServer } from "../local-server.ts";
import { DEFAULT_MAX_DECOMPRESSED_MIB } from "./input.ts";
import type { ImportOptions } from "./options.ts";
import { FORMATS, type Format } from "./readers.ts";
import { runImport } from "./run.ts";
import { summaryLine } from "./summary.ts";

const USAGE = `Usage: npm run import -- <file or URL> [options]

Imports URL records into edge-sitemaps through its admin API (PUT /sitemap-admin/urls).
Input: CSV, NDJSON, a plain text list (one URL per line), a sitemap / sitemap index XML, or an
RSS 2.0 / Atom feed (.xml, .rss, .atom, or any of them .gz; any size, streamed; an index's
sitemaps are followed).

Target:
  --url <url>          Worker URL (default: the one \`npm start\` runs, recorded in ${LOCAL_SERVER_FILE},
                       else ${DEFAULT_LOCAL_ORIGIN})
  --remote             target a deployed Worker: requires --url; without it only loopback URLs
                       are accepted, so a production import is always explicit
  --token <token>      admin token (default: env ADMIN_TOKEN; locally also ADMIN_TOKEN in .dev.vars
                       of the working directory, or of the file env IMPORT_DEV_VARS names; set
                       IMPORT_DEV_VARS="" to read no .dev.vars at all)

Input:
  --format <f>         csv | ndjson | text | xml (xml: sitemaps and feeds; default: from the file
                       name, else sniffed from the content)
  --site <origin>      accept only locs on this origin locally (repeatable); by default the
                       Worker's SITES decide, checked before anything is sent
  --section <name>     section for records that have none (default: the Worker's SECTION_RULES,
                       else the record's current section, else DEFAULT_SECTION); with --sync, the
                       scope: only this section is made equal to the input
  --origin <origin>    rewrite every loc to this origin; same-origin hreflang links are rewritten
                       too. Locally (no --remote, no --site) a loc on a site the Worker does not
                       serve switches to the Worker's own origin by itself: a local preview
  --no-fetch           never fetch index shards over the network (only files next to the index)
  --allow-host <host>  a remote index may lead to sitemaps on this host too (repeatable; by
                       default only to its own host)
  --max-decompressed <MiB>
                       most bytes one .gz input may decompress to (default ${DEFAULT_MAX_DECOMPRESSED_MIB})

Behaviour:
  --dry-run            validate only; send nothing (no token needed)
  --sync               make the scope equal to the input: the input's sites (or --section of
                       them); records of the scope the input lacks are deleted (tombstones), only
                       after the whole input was sent. A killed import deletes nothing; an empty
                       input is refused
  --max-delete <share> the most a sync may delete, as a share of the scope (default 50%; e.g.
                       80% or 0.8); a sync over it is refused with the count, nothing deleted
  --regenerate / --no-regenerate
                       POST /sitemap-admin/regenerate after an import that changed something, so
                       the sitemaps show it at once (default: on locally, off with --remote)
  --skip-invalid       send the valid records and report the invalid lines (default: if any line
                       is invalid, report all and send nothing)
  --strict             a record with any invalid part is invalid, a repeated loc is an error
                       (default: drop the images, videos, hreflang links or news entry the
                       record model cannot represent and keep the URL; keep the last of
                       repeated locs; each dropped kind is counted and reported)
  --no-dedupe          do not track locs to find repeats across batches (~130 bytes per URL, at
                       most 1,000,000 URLs tracked; repeats within a batch are still found)
  --batch-size <n>     records per request (default 1000; the Worker accepts up to ADMIN_MAX_RECORDS)
  --retries <n>        retries on network errors, 429 and 5xx (default 5, exponential backoff)
  --retry-delay <ms>   first backoff delay (default 500)
  --json               print the summary as JSON on stdout
  --quiet              no progress on stderr (invalid lines are still reported)
  -h, --help

Exit status: 0 imported; 1 invalid input (reported with file:line); 2 usage; 3 server or network.`;

export interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
}

class UsageError extends Error {}

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * ADMIN_TOKEN from .dev.vars (the local secret `wrangler dev` reads): the working directory's, or
 * the file IMPORT_DEV_VARS names; IMPORT_DEV_VARS="" reads none (tests, so that a developer's
 * own .dev.vars never changes what they see).
 */
function devVarsToken(io: Io): string | undefined {
  const path = io.env["IMPORT_DEV_VARS"] ?? `${io.cwd}/.dev.vars`;
  if (path === "" || !existsSync(path)) return undefined;
  for (const line of readFileSync(path, "utf8").split(/\r?\n/)) {
    const m = /^\s*ADMIN_TOKEN\s*=\s*(.*?)\s*$/.exec(line);
    if (m) return m[1]!.replace(/^(["'])(.*)\1$/, "$2");
  }
  return undefined;
}

function positiveInt(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}, got "${raw}"`);
  return Number(raw);
}

/** --max-delete: "80%" or "0.8" → 0.8; 50% when absent. */
function share(raw: string | undefined): number {
  if (raw === undefined) return 0.5;
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(raw.trim());
  const value = m ? Number(m[1]) / (m[2] === "%" ? 100 : 1) : Number.NaN;
  if (!(value >= 0 && value <= 1)) throw new UsageError(`--max-delete must be a share like 80% or 0.8 (0–100%), got "${raw}"`);
  return value;
}

/** The command line as node:util reads it; a usage error for unknown or malformed flags. */
function readArgs(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: "string" },
        remote: { type: "boolean" },
        token: { type: "string" },
        format: { type: "string" },
        site: { type: "string", multiple: true },
        section: { type: "string" },
        origin: { type: "string" },
        "no-fetch": { type: "boolean" },
        "allow-host": { type: "string", multiple: true },
        "max-decompressed": { type: "string" },
        strict: { type: "boolean" },
        "no-dedupe": { type: "boolean" },
        regenerate: { type: "boolean" },
        "no-regenerate": { type: "boolean" },
        "dry-run": { type: "boolean" },
        sync: { type: "boolean" },
        "max-delete": { type: "string" },
        "skip-invalid": { type: "boolean" },
        "batch-size": { type: "string" },
        retries: { type: "string" },
        "retry-delay": { type: "string" },
        "progress-interval": { type: "string" },
        "max-reported": { type: "string" },
        json: { type: "boolean" },
        quiet: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function parseCli(argv: string[], io: Io): ImportOptions | "help" {
  const parsed = readArgs(argv);
  const v = parsed.values;
  if (v.help) return "help";
  if (parsed.positionals.length !== 1)
    throw new UsageError(parsed.positionals.length === 0 ? "no input file given" : "give exactly one input file or URL");
  const input = parsed.positionals[0]!;

  const dryRun = v["dry-run"] === true;
  const remote = v.remote === true;
  if (remote && v.url === undefined) throw new UsageError("--remote needs --url <your Worker's URL>");
  const rawUrl = v.url ?? recordedLocalServer(io.cwd) ?? DEFAULT_LOCAL_ORIGIN;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got "${rawUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url must be http(s), got "${rawUrl}"`);
  if (!remote && !isLoopback(url)) throw new UsageError(`${url.origin} is not a local Worker: pass --remote to import into a deployed one`);
  if (remote && url.protocol === "http:" && !isLoopback(url)) throw new UsageError("--remote needs an https URL: the token must not travel in clear text");

  const token = v.token ?? io.env["ADMIN_TOKEN"] ?? (remote ? undefined : devVarsToken(io));
  if (!dryRun && (token === undefined || token === "")) {
    throw new UsageError(`no admin token: pass --token or set ADMIN_TOKEN${remote ? "" : " (or put ADMIN_TOKEN=… in .dev.vars)"}`);
  }

  let format: Format | undefined;
  if (v.format !== undefined) {
    if (!(FORMATS as readonly string[]).includes(v.format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got "${v.format}"`);
    format = v.format as Format;
  }
  const sites = v.site?.map((s) => {
    const origin = normalizeOrigin(s);
    if (!origin) throw new UsageError(`--site must be an origin like https://example.com, got "${s}"`);
    return origin;
  });
  let origin: string | undefined;
  if (v.origin !== undefined) {
    origin = normalizeOrigin(v.origin) ?? undefined;
    if (!origin) throw new UsageError(`--origin must be an origin like http://localhost:8787, got "${v.origin}"`);
  }
  const allowHosts = (v["allow-host"] ?? []).map((h) => {
    let host: string;
    try {
      host = new URL(`http://${h}`).host;
    } catch {
      host = "";
    }
    if (host === "" || host !== h.toLowerCase()) throw new UsageError(`--allow-host must be a host name (with a port if not the default), got "${h}"`);
    return host;
  });
  if (v.section !== undefined && !SECTION_PATTERN.test(v.section))
    throw new UsageError(`--section must be a-z, 0-9, "_" and "-" (≤ 64), got "${v.section}"`);

  const options: ImportOptions = {
    input,
    dryRun,
    skipInvalid: v["skip-invalid"] === true,
    url: url.href,
    batchSize: positiveInt("batch-size", v["batch-size"], 1000, 50_000),
    maxBatchBytes: 768 * 1024, // under the Worker's default ADMIN_MAX_BYTES (1 MiB); a 413 halves a batch anyway
    retries: v.retries === "0" ? 0 : positiveInt("retries", v.retries, 5, 20),
    retryBaseMs: positiveInt("retry-delay", v["retry-delay"], 500, 60_000),
    retryMaxMs: 30_000,
    noFetch: v["no-fetch"] === true,
    allowHosts,
    maxDecompressed: positiveInt("max-decompressed", v["max-decompressed"], DEFAULT_MAX_DECOMPRESSED_MIB, 1_048_576) * 2 ** 20,
    strict: v.strict === true,
    noDedupe: v["no-dedupe"] === true,
    autoRehost: !remote && v.origin === undefined && v.site === undefined,
    sync: v.sync === true,
    maxDelete: share(v["max-delete"]),
    regenerate: v["no-regenerate"] === true ? false : v.regenerate === true || !remote,
    progressMs: positiveInt("progress-interval", v["progress-interval"], 1000, 3_600_000),
    quiet: v.quiet === true,
    maxReported: positiveInt("max-reported", v["max-reported"], 1000, 1_000_000_000),
  };
  if (format !== undefined) options.format = format;
  if (token !== undefined) options.token = token;
  if (sites !== undefined) options.sites = sites;
  if (v.section !== undefined) options.section = v.section;
  if (origin !== undefined) options.origin = origin;
  return options;
}

export async function main(argv: string[], io: Io): Promise<number> {
  let options: ImportOptions | "help";
  try {
    options = parseCli(argv, io);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`error: ${err.message} (npm run import -- --help for the options)\n`);
    return 2;
  }
  if (options === "help") {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const json = argv.includes("--json");
  const { summary, exitCode } = await runImport(options, io.stderr);
  if (json) io.stdout.write(`${JSON.stringify({ ...summary, exitCode })}\n`);
  else io.stdout.write(summaryLine(summary));
  return exitCode;
}
