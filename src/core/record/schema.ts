/**
 * THE record declaration: one URL record, as the ingest API, seed files and imports give it.
 * The ingest validator (../validate.ts), the OpenAPI description (RecordInputSchema), the CSV
 * columns (columns.ts) and the stored-content check (stored.ts) all derive from it.
 */
import type { z } from "zod";
import { AlternatesSchema } from "../extensions/alternates.ts";
import { ImagesSchema } from "../extensions/images.ts";
import { NewsSchema } from "../extensions/news.ts";
import { VideosSchema } from "../extensions/videos.ts";
import { isPlainObject } from "./echo.ts";
import { always, object, optional } from "./fields.ts";
import { fail } from "./issues.ts";
import { declarationRank } from "./order.ts";
import { SCALAR_FIELDS } from "./scalars.ts";

/** Protocol extensions (images, videos, news, hreflang alternates), stored as `ext`. */
const EXTENSION_FIELDS = {
  images: optional(ImagesSchema),
  videos: optional(VideosSchema),
  news: optional(NewsSchema),
  alternates: optional(AlternatesSchema),
};

type Path = readonly PropertyKey[] | undefined;
const under = (path: Path, key: string): boolean => path !== undefined && path[0] === key;

/**
 * Rules that compare an extension with the record's own loc (checked as soon as loc normalised,
 * whatever else failed): a video is not the page itself, and an hreflang set lists the page.
 */
function selfReferences(payload: z.core.ParsePayload<Record<string, unknown>>): void {
  const record = payload.value;
  if (!isPlainObject(record)) return; // not an object: already reported
  const videos = record["videos"];
  const alternates = record["alternates"];
  if (videos === undefined && alternates === undefined) return; // most records: nothing to compare
  const loc = record["loc"];
  const issues = payload.issues;
  if (typeof loc !== "string" || issues.some((iss) => under(iss.path, "loc"))) return;
  if (Array.isArray(videos) && !issues.some((iss) => under(iss.path, "videos") && iss.path!.length === 1)) {
    videos.forEach((video: unknown, i) => {
      if (!isPlainObject(video)) return;
      if (video["content_loc"] === loc)
        fail(payload, "format", (f) => `${f} must be the video file, not the page's own loc`, ["videos", i, "content_loc"]);
      if (video["player_loc"] === loc) fail(payload, "format", (f) => `${f} must be the player, not the page's own loc`, ["videos", i, "player_loc"]);
    });
  }
  if (Array.isArray(alternates) && alternates.length > 0 && !issues.some((iss) => under(iss.path, "alternates"))) {
    if (!alternates.some((link: { href: string }) => link.href === loc)) {
      fail(
        payload,
        "hreflang-self",
        (f) => `${f} must include the URL itself (${loc}) with its own hreflang: every variant lists all variants, itself included`,
        ["alternates"],
      );
    }
  }
}

/**
 * A record as sent to `PUT /sitemap-admin/urls` (render it with `io: "input"`). Its output keeps
 * absent fields as undefined keys: ../validate.ts builds the record from the fields one by one.
 */
export const RecordInputSchema = object({ ...SCALAR_FIELDS, ...EXTENSION_FIELDS }, { keepAbsentKeys: true })
  .check(always(selfReferences))
  .meta({ description: "one URL record; unknown fields are rejected" });

/** Issue order: the record's fields, then its unknown fields, then its extensions (as before zod). */
export const recordIssueRank = declarationRank(RecordInputSchema, Object.keys(SCALAR_FIELDS).length - 0.5);
