/** Search-engine notification: IndexNow, ping URLs, Search Console (docs/notify.md, docs/dashboard.md). */
import { z } from "zod";
import { GSC_API_BASE_DEFAULT, INDEXNOW_ENDPOINT_DEFAULT } from "../notify.ts";
import { isHttpUrl, isSecureUrl, isUrlTemplate, listVar, variable, wholeNumber } from "../variable.ts";
import { HOUR, HTTP_URL_RULE, ORIGIN_SAMPLES, SECURE_URL_RULE } from "./units.ts";

export const INDEXNOW_ENDPOINT = variable({
  name: "INDEXNOW_ENDPOINT",
  presence: "default",
  schema: z.string().refine(isHttpUrl, { message: HTTP_URL_RULE }),
  default: INDEXNOW_ENDPOINT_DEFAULT,
  rule: HTTP_URL_RULE,
});
export const INDEXNOW_BATCHES_PER_RUN = wholeNumber({
  name: "INDEXNOW_BATCHES_PER_RUN",
  default: 5,
  min: 1,
  max: 100,
});

const PING_RULE = 'must list http(s) URL templates with {sitemap} (may use {origin} or {host}), e.g. "https://engine.example/ping?sitemap={sitemap}"';
export const PING_URLS = variable({
  name: "PING_URLS",
  presence: "default",
  schema: z.string().transform((text, ctx) => {
    const templates = listVar(text);
    for (const [i, template] of templates.entries()) {
      const problem = !template.includes("{sitemap}")
        ? "has no {sitemap} placeholder"
        : !isUrlTemplate(template, { "{sitemap}": "x", ...ORIGIN_SAMPLES })
          ? "is not an http(s) URL template"
          : null;
      if (problem !== null) {
        ctx.addIssue({ code: "custom", message: `${PING_RULE} (entry ${i + 1} ${problem})` });
        return z.NEVER;
      }
    }
    return [...new Set(templates)] as readonly string[];
  }),
  default: "",
  rule: PING_RULE,
});

const PROPERTY_RULE = 'must be a URL-prefix property (e.g. "{origin}/") or "sc-domain:<domain>"';
export const GSC_PROPERTY = variable({
  name: "GSC_PROPERTY",
  presence: "default",
  schema: z.string().refine((text) => (text.startsWith("sc-domain:") ? /^sc-domain:[a-z0-9.{}-]+$/i.test(text) : isUrlTemplate(text, ORIGIN_SAMPLES)), {
    message: PROPERTY_RULE,
  }),
  default: "{origin}/",
  rule: PROPERTY_RULE,
});
export const GSC_TOKEN_URL = variable({
  name: "GSC_TOKEN_URL",
  presence: "optional",
  schema: z.string().refine(isSecureUrl, { message: SECURE_URL_RULE }),
  default: null,
  unset: "the key file's `token_uri`, else Google's",
  rule: SECURE_URL_RULE,
});
export const GSC_API_BASE = variable({
  name: "GSC_API_BASE",
  presence: "default",
  schema: z
    .string()
    .refine(isSecureUrl, { message: SECURE_URL_RULE })
    .transform((text) => text.replace(/\/+$/, "")),
  default: GSC_API_BASE_DEFAULT,
  rule: SECURE_URL_RULE,
});
export const NOTIFY_TIMEOUT_MS = wholeNumber({
  name: "NOTIFY_TIMEOUT_MS",
  default: 10_000,
  min: 100,
  max: 60_000,
});
export const NOTIFY_SETTLE_SECONDS = wholeNumber({
  name: "NOTIFY_SETTLE_SECONDS",
  default: 60,
  min: 0,
  max: 3_600,
});

export const GSC_STATUS_INTERVAL = wholeNumber({
  name: "GSC_STATUS_INTERVAL",
  default: 6 * HOUR,
  min: HOUR / 4,
  max: 7 * 24 * HOUR,
});
