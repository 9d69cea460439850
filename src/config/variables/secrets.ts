/** Secrets (`wrangler secret put`): each one turns a feature on. */
import { z } from "zod";
import { INDEXNOW_KEY_PATTERN } from "../notify.ts";
import { variable } from "../variable.ts";

export const ADMIN_TOKEN = variable({
  name: "ADMIN_TOKEN",
  presence: "optional",
  // RFC 6750's token syntax: what hono/bearer-auth accepts in the Authorization header. At least
  // 32 characters, so it cannot be guessed (`npm start` generates a longer one).
  schema: z
    .string()
    .min(32)
    .regex(/^[A-Za-z0-9._~+/-]+=*$/),
  default: null,
  unset: "— (admin API off)",
  rule: "must be a bearer token of at least 32 characters: letters, digits and - . _ ~ + / (optionally ending in =)",
  secret: true,
});
export const INDEXNOW_KEY = variable({
  name: "INDEXNOW_KEY",
  presence: "optional",
  schema: z.string().regex(INDEXNOW_KEY_PATTERN),
  default: null,
  unset: "— (IndexNow off)",
  rule: 'must be 8 to 128 characters of a-z, A-Z, 0-9 and "-"',
  secret: true,
});

/** What the Worker reads from the service account's JSON key file. */
interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId: string | null;
  tokenUri: string | null;
}

const SERVICE_ACCOUNT_RULE = "must be the JSON key file of a Google service account";
export const GSC_SERVICE_ACCOUNT = variable({
  name: "GSC_SERVICE_ACCOUNT",
  presence: "optional",
  schema: z.string().transform((text, ctx): ServiceAccount => {
    const fail = (message: string) => {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return fail(`${SERVICE_ACCOUNT_RULE} (it is not JSON)`);
    }
    if (typeof json !== "object" || json === null) return fail("must be a JSON object");
    const { client_email: email, private_key: key, private_key_id: keyId, token_uri: tokenUri } = json as Record<string, unknown>;
    if (typeof email !== "string" || !email.includes("@")) return fail('has no "client_email"');
    if (typeof key !== "string" || !key.includes("-----BEGIN PRIVATE KEY-----")) {
      return fail('has no "private_key" in PKCS#8 PEM form ("-----BEGIN PRIVATE KEY-----")');
    }
    return {
      clientEmail: email,
      privateKey: key,
      privateKeyId: typeof keyId === "string" ? keyId : null,
      tokenUri: typeof tokenUri === "string" ? tokenUri : null,
    };
  }),
  default: null,
  unset: "— (Search Console off)",
  rule: SERVICE_ACCOUNT_RULE,
  secret: true,
});
