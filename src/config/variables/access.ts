/** Sign-in to the admin API and dashboard through Cloudflare Access (docs/dashboard.md). */
import { z } from "zod";
import { isHttpUrl, variable } from "../variable.ts";

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
