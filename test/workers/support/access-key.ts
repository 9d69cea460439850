/** An RS256 key pair as a Cloudflare Access team publishes it (a JWK in its certs) and a signer of Access JWTs with it. */
import { sign } from "hono/jwt";

export async function accessKey(kid: string) {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const priv = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const pub = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  return {
    public: { ...pub, kid, alg: "RS256", use: "sig" },
    jwt: (claims: Record<string, unknown>) => sign(claims, { ...priv, kid, alg: "RS256" }, "RS256"),
  };
}
