/**
 * A record's content as stores keep it: already validated and normalised (see ../validate.ts), so
 * reading it back checks the shape only, cheaply, to catch hand-made data that would render a
 * broken document. Its fields are the declaration's scalar fields less `section` (stores key
 * records by section), plus the extensions as one `ext` object; the `satisfies` below stops
 * compiling when the declaration gains a field this does not cover. Unknown keys pass: a store
 * extends this schema with its own fields.
 */
import { z } from "zod";
import type { RecordExtensions } from "../extensions/types.ts";
import { CHANGEFREQS } from "../types.ts";
import type { SCALAR_FIELDS } from "./scalars.ts";

type StoredField = Exclude<keyof typeof SCALAR_FIELDS, "section"> | "ext";

/** One message per field, whatever the issue: the first one names the entry's problem. */
const says = (message: string) => ({ error: () => message });
const LOC = says('"loc" must be an absolute http(s) URL');
const PRIORITY = says('"priority" must be 0.0–1.0');

const fields = {
  loc: z.string(LOC).regex(/^https?:\/\//, LOC),
  lastmod: z.string(says('"lastmod" must be a string')).nullish(),
  changefreq: z.enum(CHANGEFREQS, says(`"changefreq" must be one of ${CHANGEFREQS.join(", ")}`)).nullish(),
  priority: z.number(PRIORITY).min(0, PRIORITY).max(1, PRIORITY).nullish(),
  ext: z
    .custom<RecordExtensions>((v) => typeof v === "object" && !Array.isArray(v), says('"ext" must be an object'))
    .meta({ type: "object", description: "protocol extensions, as validated at write time" })
    .nullish(),
} satisfies Record<StoredField, z.ZodType>;

/** Stored content; `.extend()` it with a store's own fields (key, stamps, flags). */
export const StoredContentSchema = z.looseObject(fields, says("must be a JSON object"));
