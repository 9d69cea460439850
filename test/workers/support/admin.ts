/**
 * The admin as a browser and a script reach it in workerd tests, through the Worker's entry: the
 * sign-in form (from a client address of its own per call: the limiter counts per client), the
 * dashboard's CSRF token, the bearer token, and the audit trail as status shows it.
 */
import { expect } from "vitest";
import { services } from "../../../src/services.ts";
import { rebuildManifest } from "../../../src/sitemaps.ts";
import { pages, siteEnv, upsert } from "../notify-support.ts";
import { call, freshOrigin } from "../support.ts";

/** The admin token the workers project binds (vitest.config.ts). */
export const TOKEN = "test-admin-token-0123456789abcdef";
export const bearer = { Authorization: `Bearer ${TOKEN}` };

let clients = 0;
/** A client address of its own: the limiter counts per CF-Connecting-IP. */
export const freshClient = (): string => `192.0.2.${++clients}`;

/** A site of three pages with its manifest built. */
export async function seeded(label: string, vars: Record<string, string> = {}): Promise<{ origin: string; env: Env }> {
  const origin = freshOrigin(label);
  const e = siteEnv(origin, vars);
  await upsert(e, pages(origin, 3), Date.UTC(2026, 0, 1));
  await rebuildManifest(services(e), origin);
  return { origin, env: e };
}

export const signInForm = (token: string, client: string, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": client, ...headers },
  body: new URLSearchParams({ token }).toString(),
});

/** Signs in through the form: the `Cookie` header value of the new session. */
export async function signIn(e: Env, origin: string, client = freshClient()): Promise<string> {
  const res = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(TOKEN, client));
  expect(res.status).toBe(303);
  return res.headers.get("Set-Cookie")!.split(";")[0]!;
}

/** The dashboard's CSRF token for this session (the hidden field of "Regenerate now"). */
export async function csrfOf(e: Env, origin: string, cookie: string): Promise<string> {
  const body = await (await call(e, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).text();
  const m = /<input type="hidden" name="csrf" value="([^"]+)">/.exec(body);
  expect(m).not.toBeNull();
  return m![1]!;
}

export interface AuditRow {
  at: string;
  who: string;
  method: string;
  resource: string;
  records: number | null;
  status: number;
}

export interface RefusalRow {
  minute: string;
  reason: string;
  who: string;
  count: number;
}

export async function auditOf(e: Env, origin: string): Promise<{ store: string | null; entries: AuditRow[]; refused: RefusalRow[] }> {
  const res = await call(e, `${origin}/sitemap-admin/status`, { headers: bearer });
  expect(res.status).toBe(200);
  return ((await res.json()) as { audit: { store: string | null; entries: AuditRow[]; refused: RefusalRow[] } }).audit;
}

/** Refusals counted per reason, over every minute's row. */
export function refusedBy(refused: readonly RefusalRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of refused) out[r.reason] = (out[r.reason] ?? 0) + r.count;
  return out;
}

/** The admin API of `origin` under `headers` (the platform's bearer by default): a call's status and body text, a JSON body sent as such. */
export function adminApi(e: Env, origin: string, headers: Record<string, string> = bearer) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const res = await call(e, `${origin}/sitemap-admin${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
}
