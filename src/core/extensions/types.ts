/**
 * Protocol extensions of a URL record: Google's image, video and news sitemap extensions and
 * hreflang alternates (`xhtml:link`). Stored as JSON next to the record (column `ext`), in the
 * normalised form the validators return, so writers never re-check them.
 *
 * Each entry type is what its schema outputs (images.ts, videos.ts, news.ts, alternates.ts): a
 * field is declared once, in the schema, and a writer that reads one the schema lacks does not
 * compile. Field names are the XML element names (snake_case), so a record reads like the markup
 * it becomes.
 */
import type { z } from "zod";
import type { AlternatesSchema } from "./alternates.ts";
import type { ImagesSchema } from "./images.ts";
import type { NewsSchema } from "./news.ts";
import type { VideosSchema } from "./videos.ts";

export type ImageEntry = z.output<typeof ImagesSchema>[number];
export type VideoEntry = z.output<typeof VideosSchema>[number];
/** The schema leaves `publication` optional only so that its absence gets its own message; a check requires it. */
type NewsOutput = z.output<typeof NewsSchema>;
export type NewsEntry = Omit<NewsOutput, "publication"> & { publication: NonNullable<NewsOutput["publication"]> };
export type AlternateLink = z.output<typeof AlternatesSchema>[number];

export interface RecordExtensions {
  images?: ImageEntry[];
  videos?: VideoEntry[];
  news?: NewsEntry;
  alternates?: AlternateLink[];
}
