/**
 * The operator's variables: sign-in through Cloudflare Access (docs/dashboard.md) and how often the
 * cron reads Search Console's sitemap status. Listed in VARIABLES (src/config/variables.ts) and
 * read with `readVariable` where they are used, each in a try/catch so a bad value turns off only
 * its own feature (parseConfig names it in `Config.disabled`).
 */
import { z } from "zod";
import { isHttpUrl, variable, wholeNumber } from "./variable.ts";

const HOUR = 3_600;

const TEAM_RULE = 'must be the Access team domain, e.g. "myteam.cloudflareaccess.com" (or an http(s) URL of the team\'s issuer)';
/**
 * The team's issuer as a URL: a bare domain becomes `https://<domain>`; a full http(s) URL is
 * taken as is (a local Access stand-in in tests). The JWKS is `<issuer>/cdn-cgi/access/certs`.
 */
export const ACCESS_TEAM_DOMAIN = variable({
  name: "ACCESS_TEAM_DOMAIN",
  presence: "optional",
  schema: z
    .string()
    .transform((text) => (/^https?:\/\//i.test(text) ? text : `https://${text}`).replace(/\/+$/, ""))
    .refine((url) => isHttpUrl(url) && !new URL(url).search && !new URL(url).hash && /^[a-z0-9.-]+$/i.test(new URL(url).hostname), {
      message: TEAM_RULE,
    }),
  default: null,
  unset: "— (Access sign-in off)",
  rule: TEAM_RULE,
  doc: "Cloudflare Access team domain (`<team>.cloudflareaccess.com`): with `ACCESS_AUD`, an Access JWT signs in to `/sitemap-admin/`",
});

const AUD_RULE = "must be the Access application's audience tag (letters and digits)";
export const ACCESS_AUD = variable({
  name: "ACCESS_AUD",
  presence: "optional",
  schema: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/),
  default: null,
  unset: "— (Access sign-in off)",
  rule: AUD_RULE,
  doc: "the Access application's audience (AUD) tag, checked in the JWT's `aud`",
});

export const GSC_STATUS_INTERVAL = wholeNumber({
  name: "GSC_STATUS_INTERVAL",
  default: 6 * HOUR,
  min: HOUR / 4,
  max: 7 * 24 * HOUR,
  doc: "seconds between two reads of Search Console's `sitemaps.list` per site (with `GSC_SERVICE_ACCOUNT`)",
});
