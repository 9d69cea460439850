/** robots.txt: where the site's own file is fetched from and how long the merged one is cached (docs/notify.md). */
import { z } from "zod";
import { ROBOTS_ORIGIN_URL_DEFAULT } from "../notify.ts";
import { isUrlTemplate, variable, wholeNumber } from "../variable.ts";
import { DAY, ORIGIN_SAMPLES } from "./units.ts";

const ROBOTS_RULE = 'must be an http(s) URL (may use {origin} or {host}) or "none"';
export const ROBOTS_ORIGIN_URL = variable({
  name: "ROBOTS_ORIGIN_URL",
  presence: "default",
  schema: z
    .string()
    .refine((text) => text === "none" || isUrlTemplate(text, ORIGIN_SAMPLES), { message: ROBOTS_RULE })
    .transform((text) => (text === "none" ? null : text)),
  default: ROBOTS_ORIGIN_URL_DEFAULT,
  rule: ROBOTS_RULE,
});
export const ROBOTS_ORIGIN_TIMEOUT_MS = wholeNumber({
  name: "ROBOTS_ORIGIN_TIMEOUT_MS",
  default: 3_000,
  min: 100,
  max: 30_000,
});
export const ROBOTS_MAX_AGE = wholeNumber({
  name: "ROBOTS_MAX_AGE",
  default: 300,
  min: 0,
  max: DAY,
});
