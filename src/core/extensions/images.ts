/** `images`: Google's image sitemap extension, up to 1,000 per URL. */
import { z } from "zod";
import { list, object, optional, text, url } from "../record/fields.ts";
import { MAX_IMAGES_PER_URL, MAX_TEXT } from "./limits.ts";

const ImageSchema = object({
  loc: url().describe("the image (any host, e.g. a CDN)"),
  caption: optional(text(MAX_TEXT)),
  geo_location: optional(text(MAX_TEXT)),
  title: optional(text(MAX_TEXT)),
  license: optional(url()),
});

/** A bare URL string is shorthand for an image with just a loc. */
const ImageOrUrl = z
  .preprocess((value) => (typeof value === "string" ? { loc: value } : value), ImageSchema)
  .meta({ description: "an image; a bare URL string is shorthand for { loc }" });

export const ImagesSchema = list(ImageOrUrl, MAX_IMAGES_PER_URL);
