/**
 * A record as sent to `PUT /sitemap-admin/urls`, for the OpenAPI document's `RecordInput`
 * component (the core validator enforces the rules). One small file so that the one record
 * declaration of src/core/record/ can replace it.
 */
import { z } from "zod";
import { MAX_LOC_LENGTH } from "../core/limits.ts";
import { CHANGEFREQS } from "../core/types.ts";

export const RecordInputSchema = z.strictObject({
  loc: z
    .string()
    .max(MAX_LOC_LENGTH)
    .describe("absolute http(s) URL on a configured site (any of SITES, not necessarily the host the request was sent to)"),
  lastmod: z.string().nullable().optional().describe("W3C datetime: YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.s]](Z|±hh:mm)"),
  changefreq: z.enum(CHANGEFREQS).nullable().optional(),
  priority: z
    .union([z.number().min(0).max(1), z.string()])
    .nullable()
    .optional()
    .describe("0.0–1.0 (a number, or a decimal string)"),
  section: z.string().nullable().optional().describe("sitemap section (a-z, 0-9, _ and -; ≤ 64); DEFAULT_SECTION when absent"),
  images: z.unknown().optional().describe("protocol extension data, stored as JSON"),
  videos: z.unknown().optional().describe("protocol extension data, stored as JSON"),
  news: z.unknown().optional().describe("protocol extension data, stored as JSON"),
  alternates: z.unknown().optional().describe("protocol extension data, stored as JSON"),
});
