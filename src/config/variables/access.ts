/** Sign-in to the admin API and dashboard through Cloudflare Access (docs/dashboard.md). */
import { z } from "zod";
import { variable } from "../variable.ts";

const TEAM_RULE = 'must be the Access team domain, "https://<team>.cloudflareaccess.com" (or "<team>.cloudflareaccess.com")';
/**
 * The team's issuer: `https://<team>.cloudflareaccess.com`, nothing else. The signing keys are
 * fetched from `<issuer>/cdn-cgi/access/certs`, so any other scheme or host would let whoever
 * answers there sign admins in.
 */
export const ACCESS_TEAM_DOMAIN = variable({
  name: "ACCESS_TEAM_DOMAIN",
  presence: "optional",
  schema: z
    .string()
    .transform((text) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).replace(/\/+$/, "").toLowerCase())
    .refine((url) => /^https:\/\/[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.cloudflareaccess\.com$/.test(url), { message: TEAM_RULE }),
  default: null,
  unset: "— (Access sign-in off)",
  rule: TEAM_RULE,
});

const TEST_ISSUER_RULE =
  'is for local tests only (an Access stand-in on "http://127.0.0.1:<port>" or "http://localhost:<port>"): unset it before deploying';
/**
 * A local Access stand-in's issuer, for tests against the real Worker (test/node/dashboard.test.ts):
 * it replaces ACCESS_TEAM_DOMAIN. Loopback only, so it can never point a deployed Worker at a host
 * of someone else's; `npm run check-config` (and so every deploy) refuses any value of it.
 */
export const ACCESS_TEST_ISSUER = variable({
  name: "ACCESS_TEST_ISSUER",
  presence: "optional",
  schema: z
    .string()
    .transform((text) => text.replace(/\/+$/, ""))
    .refine((url) => /^http:\/\/(?:127\.0\.0\.1|localhost):\d{1,5}$/.test(url), { message: TEST_ISSUER_RULE }),
  default: null,
  unset: "— (unset)",
  rule: TEST_ISSUER_RULE,
});

const AUD_RULE = "must be the Access application's audience tag (letters and digits)";
export const ACCESS_AUD = variable({
  name: "ACCESS_AUD",
  presence: "optional",
  schema: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/),
  default: null,
  unset: "— (Access sign-in off)",
  rule: AUD_RULE,
});
