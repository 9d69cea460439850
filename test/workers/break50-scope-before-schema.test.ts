/**
 * Hostile review of issue 50, Deliver item 1 ("Authorization runs before body validation") and its
 * check ("A's token on A's host naming B's resources ... is refused (401, 403 or 404)"). The sync's
 * ownership is checked before the validators for a sync named by id (src/admin/app.ts
 * `syncOwnership`), but a scope naming another site in POST /syncs is judged in the handler
 * (src/admin/syncs.ts `startSync`), after the route's zod validator read the whole body: a body
 * naming B whose other fields break the schema is 400 `invalid_body`, not refused. The control: the
 * same scope in a body that keeps the schema is 403. A failing case here is a finding.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const REFUSED = [401, 403, 404];

const startAs = (e: Env, origin: string, token: string, body: unknown) =>
  call(e, `${origin}/sitemap-admin/syncs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

describe("A's token on A's host, starting a sync whose scope is B", () => {
  const bodies: [string, Record<string, unknown>][] = [
    ["a section that breaks its pattern", { section: "Not A Section!" }],
    ["a maxDelete that is not a number", { maxDelete: "all" }],
    ["a field the schema does not know", { extra: true }],
  ];
  it.each(bodies)("with %s is refused as B's (401/403/404), before the body's schema", async (_name, rest) => {
    const e = { ...baseEnv } as Env;
    const a = await registeredSite(e, "scope-a");
    const b = await registeredSite(e, "scope-b");
    const res = await startAs(e, a.origin, a.token, { sites: [b.origin], ...rest });
    expect(REFUSED, `${res.status} ${await res.text()}`).toContain(res.status);
  });

  it("control: with a body that keeps the schema is 403", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registeredSite(e, "scope-a");
    const b = await registeredSite(e, "scope-b");
    expect((await startAs(e, a.origin, a.token, { sites: [b.origin] })).status).toBe(403);
  });
});
