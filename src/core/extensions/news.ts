/** `news`: Google's news sitemap extension, one article per URL. */

import { echo, isPlainObject } from "../record/echo.ts";
import { always, datetime, object, optional, text } from "../record/fields.ts";
import { fail } from "../record/issues.ts";
import { MAX_TEXT } from "./limits.ts";

/** ISO 639-1/2 codes, or the two Chinese variants Google News wants (sitemap-news.xsd pattern). */
const NEWS_LANGUAGE = /^(?:zh-cn|zh-tw|[a-z]{2,3})$/;

const language = text(16, (payload) => {
  const lang = payload.value;
  if (!NEWS_LANGUAGE.test(lang)) {
    fail(payload, "format", (f) => `${f} must be an ISO 639 code of 2 or 3 lowercase letters, or zh-cn / zh-tw, got ${echo(lang)}`);
  }
}).meta({ pattern: NEWS_LANGUAGE.source });

export const NewsSchema = object({
  // Optional here so its absence reads "required ({ name, language })" (the check below).
  publication: optional(object({ name: text(MAX_TEXT), language })).describe("{ name, language } (required)"),
  publication_date: datetime(true),
  title: text(MAX_TEXT),
}).check(
  always((payload) => {
    if (isPlainObject(payload.value) && payload.value.publication === undefined) {
      fail(payload, "required", (f) => `${f} is required ({ name, language })`, ["publication"]);
    }
  }),
);
