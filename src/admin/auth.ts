/**
 * Admin authentication: `Authorization: Bearer <ADMIN_TOKEN>`. Without a configured token every
 * admin path is 404 (the API does not exist); a wrong or missing token is 401 with no detail.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app.ts";
import { notFound } from "../http/respond.ts";

const encoder = new TextEncoder();

/**
 * Constant-time comparison: both sides are hashed first so the compared buffers always have the
 * same length (timingSafeEqual requires it, and lengths must not leak either).
 */
export async function tokensEqual(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(a, b);
}

export function unauthorized(): Response {
  return new Response(JSON.stringify({ error: "unauthorized" }), {
    status: 401,
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "WWW-Authenticate": 'Bearer realm="sitemap-admin"',
      "Cache-Control": "no-store",
    },
  });
}

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = (c.env as { ADMIN_TOKEN?: unknown }).ADMIN_TOKEN;
  if (typeof expected !== "string" || expected === "") return notFound("no such sitemap path");
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match || !(await tokensEqual(match[1]!, expected))) return unauthorized();
  await next();
};
