/** The record's own fields: the `<url>` children of sitemaps.org 0.9, and our `section`. */
import { z } from "zod";
import { normalizeW3cDatetime } from "../datetime.ts";
import { SECTION_PATTERN } from "../limits.ts";
import { CHANGEFREQS } from "../types.ts";
import { echo } from "./echo.ts";
import { cleanString, optional, url, xmlClean } from "./fields.ts";
import { fail } from "./issues.ts";

const CHANGEFREQ_SET: ReadonlySet<string> = new Set(CHANGEFREQS);
/** Same shape as a JSON decimal in 0.0–1.0; the numeric range check follows. */
const PRIORITY_STRING = /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/;

const loc = url().describe("absolute http(s) URL on a configured site (any of SITES, not necessarily the host the request was sent to)");

const lastmod = cleanString((payload) => {
  const raw = payload.value;
  const normalised = normalizeW3cDatetime(raw);
  if (normalised !== null) payload.value = normalised;
  else {
    fail(payload, "w3c-datetime", (f) => `${f} must be a W3C datetime (YYYY-MM-DD, or YYYY-MM-DDThh:mm[:ss[.s]] with Z or ±hh:mm), got ${echo(raw)}`);
  }
}).describe("W3C datetime: YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.s]](Z|±hh:mm)");

const changefreq = cleanString((payload) => {
  const value = payload.value;
  if (!CHANGEFREQ_SET.has(value)) {
    fail(payload, "changefreq-enum", (f) => `${f} must be one of ${CHANGEFREQS.join(", ")} (lowercase), got ${echo(value)}`);
  }
}).meta({ enum: [...CHANGEFREQS] });

// Not z.number(): NaN and ±Infinity are numbers out of range here, not of the wrong type.
const priority = z
  .unknown()
  .check((payload) => {
    const raw = payload.value;
    let p: number;
    if (typeof raw === "number") p = raw;
    else if (typeof raw === "string") {
      if (!xmlClean(payload as z.core.ParsePayload<string>)) return;
      p = PRIORITY_STRING.test(raw) ? Number(raw) : Number.NaN;
    } else return fail(payload, "type", (f) => `${f} must be a number, got ${echo(raw)}`);
    // `!(…)` so NaN lands here too; Infinity fails the range on its own.
    if (!(p >= 0 && p <= 1)) return fail(payload, "priority-range", (f) => `${f} must be between 0.0 and 1.0, got ${echo(raw)}`);
    payload.value = p === 0 ? 0 : p; // -0 → 0, so it never prints as "-0.0"
  })
  .meta({
    anyOf: [
      { type: "number", minimum: 0, maximum: 1 },
      { type: "string", pattern: PRIORITY_STRING.source },
    ],
    description: "0.0–1.0 (a number, or a decimal string)",
  }) as unknown as z.ZodType<number, number | string>;

const section = cleanString((payload) => {
  const value = payload.value;
  if (!SECTION_PATTERN.test(value)) {
    fail(
      payload,
      "section-name",
      (f) => `${f} must be 1–64 characters of a-z, 0-9, "_" and "-", starting and ending with a letter or digit, got ${echo(value)}`,
    );
  }
}).meta({ pattern: SECTION_PATTERN.source, description: "sitemap section; the configured default section when absent" });

/** The scalar fields of a record, in the order issues are reported. */
export const SCALAR_FIELDS = {
  loc,
  lastmod: optional(lastmod),
  changefreq: optional(changefreq),
  priority: optional(priority),
  section: optional(section),
};
