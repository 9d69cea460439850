/**
 * Issue 50, defect 1: a sync found by id belongs to the sites of the host it is called on. Site A's
 * token on A's own host, naming B's sync (both in the shared `DB`), reads, feeds, commits and aborts
 * nothing of it: each call is 404 as if the id did not exist, and B's sync stays open with its
 * records as they were. Controls: B's own token on B's host does each of these.
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_OPEN_SYNCS_PER_SITE } from "../../src/admin/syncs.ts";
import { registeredSite } from "./support/registered.ts";
import { call } from "./support.ts";

const registered = (e: Env) => registeredSite(e, "own");

const json = (token: string, method: string, body?: unknown): RequestInit => ({
  method,
  headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

/** Every call that names a sync by id, as a site's script would make it. */
const OPERATIONS = [
  { name: "read", path: (id: string) => `/sitemap-admin/syncs/${id}`, init: (t: string) => json(t, "GET") },
  { name: "feed", path: (id: string) => `/sitemap-admin/syncs/${id}/urls`, init: (t: string, o: string) => json(t, "PUT", [{ loc: `${o}/fed` }]) },
  { name: "commit", path: (id: string) => `/sitemap-admin/syncs/${id}/commit`, init: (t: string) => json(t, "POST", { maxDelete: 1 }) },
  { name: "abort", path: (id: string) => `/sitemap-admin/syncs/${id}`, init: (t: string) => json(t, "DELETE") },
] as const;

describe("a sync named by id", () => {
  it.each(OPERATIONS)("$name: A's token on A's host naming B's sync is 404, and B's sync and records are untouched", async (op) => {
    const e = { ...baseEnv } as Env;
    const a = await registered(e);
    const b = await registered(e);
    const locs = [`${b.origin}/one`, `${b.origin}/two`, `${b.origin}/three`];
    expect(
      (
        await call(
          e,
          `${b.origin}/sitemap-admin/urls`,
          json(
            b.token,
            "PUT",
            locs.map((loc) => ({ loc })),
          ),
        )
      ).status,
    ).toBe(200);
    const started = await call(e, `${b.origin}/sitemap-admin/syncs`, json(b.token, "POST", { sites: [b.origin], maxDelete: 1 }));
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };
    expect((await call(e, `${b.origin}/sitemap-admin/syncs/${id}/urls`, json(b.token, "PUT", [{ loc: locs[0] }]))).status).toBe(200);

    const crossed = await call(e, `${a.origin}${op.path(id)}`, op.init(a.token, a.origin));
    expect(crossed.status).toBe(404);
    expect(await crossed.text()).not.toContain(b.origin);

    const state = (await (await call(e, `${b.origin}/sitemap-admin/syncs/${id}`, json(b.token, "GET"))).json()) as { state: string; received: number };
    expect(state).toMatchObject({ state: "open", received: 1 });
    for (const loc of locs) {
      expect((await call(e, `${b.origin}/sitemap-admin/urls?loc=${encodeURIComponent(loc)}`, json(b.token, "GET"))).status).toBe(200);
    }
    // Control: the owner's own call on its own host does what the crossed one could not.
    const own = await call(e, `${b.origin}${op.path(id)}`, op.init(b.token, b.origin));
    expect(own.status).toBe(200); // commit: maxDelete 1 lets it delete the two records it did not see, as the crossed one would have
  });
});

describe("open syncs per site", () => {
  it("are capped: past the cap a start is 429 naming the way out; another site is not held up; aborting one makes room", async () => {
    const e = { ...baseEnv } as Env;
    const a = await registered(e);
    const b = await registered(e);
    const ids: string[] = [];
    for (let i = 0; i < MAX_OPEN_SYNCS_PER_SITE; i++) {
      const res = await call(e, `${a.origin}/sitemap-admin/syncs`, json(a.token, "POST", { sites: [a.origin] }));
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const over = await call(e, `${a.origin}/sitemap-admin/syncs`, json(a.token, "POST", { sites: [a.origin] }));
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error: "too_many_syncs" });
    expect((await call(e, `${b.origin}/sitemap-admin/syncs`, json(b.token, "POST", { sites: [b.origin] }))).status).toBe(201);
    expect((await call(e, `${a.origin}/sitemap-admin/syncs/${ids[0]}`, json(a.token, "DELETE"))).status).toBe(200);
    expect((await call(e, `${a.origin}/sitemap-admin/syncs`, json(a.token, "POST", { sites: [a.origin] }))).status).toBe(201);
  });
});
