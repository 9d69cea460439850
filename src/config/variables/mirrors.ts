/** Mirrored sitemaps (docs/mirror.md). */
import { z } from "zod";
import { isHttpUrl, listVar, variable, wholeNumber } from "../variable.ts";

/**
 * The longest mirror URL (as normalized, `URL.href`): a mirror job's message names its URL, and
 * Queues takes 128 KB a message and 256 KB a batch (src/jobs/scheduler.ts `sendBatches`); a
 * registered site's whole setting is at most this long too (src/admin/schemas.ts).
 */
export const MAX_MIRROR_URL_CHARS = 16_384;
const MIRROR_RULE = `must list http(s) URLs of sitemaps or sitemap indexes, each at most ${MAX_MIRROR_URL_CHARS.toLocaleString("en-US")} characters`;
export const MIRROR_SITEMAPS = variable({
  name: "MIRROR_SITEMAPS",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const urls = listVar(text);
    const bad = urls.findIndex((url) => !isHttpUrl(url) || new URL(url).href.length > MAX_MIRROR_URL_CHARS);
    if (bad >= 0) {
      ctx.addIssue({ code: "custom", message: `${MIRROR_RULE} (entry ${bad + 1} is not one)` });
      return z.NEVER;
    }
    return [...new Set(urls.map((url) => new URL(url).href))] as readonly string[];
  }),
  default: "",
  rule: MIRROR_RULE,
});
export const MIRROR_MAX_RECORDS_PER_RUN = wholeNumber({
  name: "MIRROR_MAX_RECORDS_PER_RUN",
  default: 50_000,
  min: 100,
  max: 1_000_000,
});
/**
 * Requests to mirrored hosts per run, all mirrors together (docs/mirror.md "Budgets"). 200: each
 * document read costs about four D1 queries, and a Worker invocation has 1,000 of them (Paid).
 */
export const MIRROR_MAX_REQUESTS_PER_RUN = wholeNumber({
  name: "MIRROR_MAX_REQUESTS_PER_RUN",
  default: 200,
  min: 10,
  max: 1_000,
});
export const MIRROR_MAX_BYTES = wholeNumber({
  name: "MIRROR_MAX_BYTES",
  default: 64 * 1024 * 1024,
  min: 1024,
  max: 256 * 1024 * 1024,
});
export const MIRROR_TIMEOUT_MS = wholeNumber({
  name: "MIRROR_TIMEOUT_MS",
  default: 30_000,
  min: 100,
  max: 600_000,
});
export const MIRROR_MAX_DELETE = wholeNumber({
  name: "MIRROR_MAX_DELETE",
  default: 50,
  min: 0,
  max: 100,
});
