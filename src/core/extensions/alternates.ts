/** `alternates`: hreflang variants of the URL (`xhtml:link rel="alternate"`), up to 1,000. */

import { echo, isPlainObject } from "../record/echo.ts";
import { always, list, object, text, url } from "../record/fields.ts";
import { fail } from "../record/issues.ts";
import { MAX_ALTERNATES_PER_URL } from "./limits.ts";

/** BCP 47 language[-script][-region] as search engines take it in hreflang, or x-default. */
const HREFLANG = /^(?:x-default|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*)$/;

const hreflang = text(64, (payload) => {
  const lang = payload.value;
  if (!HREFLANG.test(lang)) {
    fail(payload, "format", (f) => `${f} must be a language code like "en", "en-GB", "zh-Hant" or "x-default", got ${echo(lang)}`);
  }
}).meta({ pattern: HREFLANG.source });

const AlternateSchema = object({ hreflang, href: url() });

/** Each language appears once (case-insensitively); only languages that passed their own checks count. */
export const AlternatesSchema = list(AlternateSchema, MAX_ALTERNATES_PER_URL).check(
  always((payload) => {
    if (!Array.isArray(payload.value) || payload.issues.some((iss) => iss.path === undefined || iss.path.length === 0)) return;
    const seen = new Map<string, number>();
    payload.value.forEach((item: unknown, i) => {
      if (!isPlainObject(item) || typeof item["hreflang"] !== "string") return;
      const lang = item["hreflang"];
      if (!HREFLANG.test(lang) || payload.issues.some((iss) => iss.path?.[0] === i && iss.path[1] === "hreflang")) return;
      const key = lang.toLowerCase();
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else {
        fail(payload, "hreflang-duplicate", (f) => `${f} ${echo(lang)} is already used by alternates[${first}]; each language appears once`, [
          i,
          "hreflang",
        ]);
      }
    });
  }),
);
