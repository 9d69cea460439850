/** Sign-in to the admin API and dashboard through Cloudflare Access (docs/dashboard.md). */
import { z } from "zod";
import { listVar, variable } from "../variable.ts";

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

const SERVICE_TOKENS_RULE = "must be Access service token Client IDs (letters, digits, '.', '_', '-'), separated by spaces";
/**
 * The Access service tokens that may sign in (their Client IDs, `<32 hex>.access`). Access signs a
 * service token's JWT with the same keys as a person's, for any service token the Access policy
 * lets through; which tokens are scripts of this admin is said here, not read from the claims.
 * Unset: no service token signs in (people still do).
 */
export const ACCESS_SERVICE_TOKEN_IDS = variable({
  name: "ACCESS_SERVICE_TOKEN_IDS",
  presence: "optional",
  schema: z
    .string()
    .transform((text) => listVar(text))
    .refine((ids) => ids.every((id) => /^[A-Za-z0-9._-]{1,128}$/.test(id)), { message: SERVICE_TOKENS_RULE })
    .transform((ids): ReadonlySet<string> => new Set(ids)),
  default: null,
  unset: "— (no service token)",
  rule: SERVICE_TOKENS_RULE,
});
