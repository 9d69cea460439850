/**
 * Issue 43 item 5, "the admin's remaining holes", each black-box through the Worker's entry with
 * real D1/KV: the dashboard's action takes no query, runs once per site per cooldown, and site
 * passes are coalesced; refusals are counted apart from the audit trail and never evict an
 * accepted write; a cross-site sign-in counts against no one, IPv6 clients are counted by /64 and
 * requests without a client address are pooled with no one; session rows hold nothing a guess of
 * ADMIN_TOKEN can be checked against; only listed Access service tokens sign in
 * (test/workers/admin-access.test.ts).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { D1AdminStateStore } from "../../src/adapters/d1/admin-state.ts";
import { D1JobStateStore } from "../../src/adapters/d1/job-state.ts";
import { ACTION_COOLDOWN_SECONDS } from "../../src/admin/auth/action-cooldown.ts";
import { SESSION_COOKIE } from "../../src/admin/auth/session.ts";
import { AUDIT_KEPT, REFUSALS_KEPT } from "../../src/admin-state/store.ts";
import { demoSection } from "../../src/demo/demo-data.ts";
import { CHAIN_LOST_MS } from "../../src/jobs/store.ts";
import { services } from "../../src/services.ts";
import { newSite, write } from "./regen-support.ts";
import { TOKEN, auditOf, bearer, csrfOf, refusedBy, seeded, signIn, signInForm } from "./support/admin.ts";
import { type RecordingQueue, deliver, drain, withJobs } from "./support/jobs.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const quiet = () => vi.spyOn(console, "log").mockImplementation(() => undefined);

interface Run {
  mode: string;
  trigger: string;
  rowsRead: number;
}
async function runsOf(e: Env, origin: string): Promise<Run[]> {
  const res = await call(e, `${origin}/sitemap-admin/status`, { headers: bearer });
  return ((await res.json()) as { runs: Run[] }).runs;
}

/** What a script on the site's pages makes with `form.submit()`: a same-origin navigation carrying the page's CSRF token. */
const formSubmit = (origin: string, cookie: string, csrf: string): RequestInit => ({
  method: "POST",
  headers: {
    Cookie: cookie,
    "Content-Type": "application/x-www-form-urlencoded",
    Origin: origin,
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Dest": "document",
  },
  body: new URLSearchParams({ csrf }).toString(),
});

const regenerations = (queue: RecordingQueue) => queue.sent.filter((m) => m.body.kind === "regenerate");

describe("the dashboard's Regenerate form", () => {
  it("a scripted form.submit() with ?full=1, twice in a row: both refused (403: the action takes no query), nothing queued", async () => {
    quiet();
    const { origin, env: seededEnv } = await seeded("holes-form-full");
    const { env: e, queue } = withJobs(seededEnv);
    const cookie = await signIn(e, origin);
    const csrf = await csrfOf(e, origin, cookie);
    for (let i = 0; i < 2; i++) {
      const res = await call(e, `${origin}/sitemap-admin/regenerate?full=1`, formSubmit(origin, cookie, csrf));
      // A dashboard action is answered with the way back to the dashboard, which says it was refused.
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=403");
    }
    expect(regenerations(queue)).toEqual([]);
    expect(refusedBy((await auditOf(e, origin)).refused)).toEqual({ "action-query": 2 });
    // Nor does the query ride along in any other spelling.
    const other = await call(e, `${origin}/sitemap-admin/regenerate?full=true&x=1`, formSubmit(origin, cookie, csrf));
    expect(other.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=403");
    expect(regenerations(queue)).toEqual([]);
  });

  it(`the form without a query runs once per site every ${ACTION_COOLDOWN_SECONDS / 60} minutes, whichever session submits it; scripts with the token are not limited`, async () => {
    quiet();
    const { origin, env: seededEnv } = await seeded("holes-form-cooldown");
    const { env: e, queue } = withJobs(seededEnv);
    const cookie = await signIn(e, origin);
    const csrf = await csrfOf(e, origin, cookie);
    const first = await call(e, `${origin}/sitemap-admin/regenerate`, formSubmit(origin, cookie, csrf));
    expect(first.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=202");
    const second = await call(e, `${origin}/sitemap-admin/regenerate`, formSubmit(origin, cookie, csrf));
    expect(second.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=429");
    // Another session of the same site shares the cooldown.
    const otherCookie = await signIn(e, origin);
    const third = await call(e, `${origin}/sitemap-admin/regenerate`, formSubmit(origin, otherCookie, await csrfOf(e, origin, otherCookie)));
    expect(third.headers.get("Location")).toBe("/sitemap-admin/?done=regenerate&status=429");
    expect(regenerations(queue).map((m) => m.body.full ?? false)).toEqual([false]);
    const page = await (await call(e, `${origin}/sitemap-admin/?done=regenerate&status=429`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain(`Regeneration refused: it was requested from the dashboard less than ${ACTION_COOLDOWN_SECONDS / 60} minutes ago (HTTP 429).`);
    const audit = await auditOf(e, origin);
    expect(refusedBy(audit.refused)).toEqual({ cooldown: 2 });
    expect(audit.entries.map((x) => [x.resource, x.status])).toEqual([["/sitemap-admin/regenerate", 202]]);
    // The bearer token is a script's own credential: no cooldown.
    expect((await call(e, `${origin}/sitemap-admin/regenerate`, { method: "POST", headers: bearer })).status).toBe(202);
    expect((await drain(e, queue, { early: true })).every((d) => d.result === "acked")).toBe(true);
  });

  it("two full regenerations asked for in a row (bearer token): the second is coalesced and one site pass runs", async () => {
    quiet();
    const { origin, env: seededEnv } = await seeded("holes-full-twice");
    const { env: e, queue } = withJobs(seededEnv);
    // Converged first (the first run of a site is a pass anyway).
    expect((await call(e, `${origin}/sitemap-admin/regenerate`, { method: "POST", headers: bearer })).status).toBe(202);
    await drain(e, queue, { early: true });
    const before = (await runsOf(e, origin)).length;
    const sent = regenerations(queue).length;
    const ask = async () => (await call(e, `${origin}/sitemap-admin/regenerate?full=1`, { method: "POST", headers: bearer })).json();
    expect(await ask()).toMatchObject({ queued: true, full: true, coalesced: false });
    expect(await ask()).toMatchObject({ queued: true, full: true, coalesced: true });
    expect(
      regenerations(queue)
        .slice(sent)
        .map((m) => m.body.full),
    ).toEqual([true]);
    await drain(e, queue, { early: true });
    const runs = await runsOf(e, origin);
    expect(runs.slice(0, runs.length - before).map((r) => r.mode)).toEqual(["pass"]);
  });

  it("a full regeneration asked for while a site pass is under way joins that pass (never restarts it)", async () => {
    quiet();
    // 30 shards of 100 URLs, 5 a run: a pass is six steps of the chain.
    const site = newSite("holes-full-pass", { MAX_URLS_PER_SHARD: "100", REGEN_MAX_SHARDS: "5" });
    await write(site, demoSection(site.origin, "pages", 3_000), Date.UTC(2026, 0, 1));
    const { env: e, queue } = withJobs(site.env);
    expect((await call(e, `${site.origin}/sitemap-admin/regenerate`, { method: "POST", headers: bearer })).status).toBe(202);
    await drain(e, queue, { early: true });
    const before = (await runsOf(e, site.origin)).length;

    expect(await (await call(e, `${site.origin}/sitemap-admin/regenerate?full=1`, { method: "POST", headers: bearer })).json()).toMatchObject({
      coalesced: false,
    });
    // One step of the pass.
    const step = queue.pending.shift()!;
    await deliver(e, step.body, 1, undefined, step.id);
    // While it is under way: the route asks for nothing more than a plain run, which does not start it over.
    expect(await (await call(e, `${site.origin}/sitemap-admin/regenerate?full=1`, { method: "POST", headers: bearer })).json()).toMatchObject({
      full: true,
      coalesced: true,
    });
    await drain(e, queue, { early: true });
    const all = await runsOf(e, site.origin);
    const runs = all.slice(0, all.length - before);
    expect(runs.filter((r) => r.mode === "pass")).toHaveLength(6);
    expect(runs.reduce((n, r) => n + r.rowsRead, 0)).toBeLessThanOrEqual(1.3 * 3_000);
  });

  it("the jobs' state says when a site pass is asked for and not begun, or its step runs", async () => {
    const state = new D1JobStateStore(env.DB);
    const origin = freshOrigin("holes-job-state");
    const now = Date.now();
    const holder = { id: "m1", attempt: 1 };
    const asked = (at: number) => state.passAsked("regenerate", origin, at);
    expect(await asked(now)).toBe(false);
    expect(await state.request({ kind: "regenerate", origin, dueAt: now, chain: "c1" }, now)).toBe(true);
    expect(await asked(now)).toBe(false); // a plain run
    expect(await state.request({ kind: "regenerate", origin, dueAt: now, chain: "c2", full: true }, now + 1)).toBe(false);
    expect(await asked(now + 1)).toBe(true); // folded into the live chain, not begun
    expect(await state.begin("regenerate", origin, "c1", 0, holder, now + 2, 60_000)).toMatchObject({ full: true });
    expect(await asked(now + 3)).toBe(true); // its step runs
    expect(await asked(now + 2 + 60_000)).toBe(false); // its lease ran out: the step is dead, not running
    expect(await state.finish("regenerate", origin, "c1", holder, now + 4)).toBeNull();
    expect(await asked(now + 5)).toBe(false);
    // A chain lost long ago holds no pass (a request starts a new chain).
    const lost = freshOrigin("holes-job-lost");
    await state.request({ kind: "regenerate", origin: lost, dueAt: now, chain: "c3", full: true }, now);
    expect(await state.passAsked("regenerate", lost, now)).toBe(true);
    expect(await state.passAsked("regenerate", lost, now + CHAIN_LOST_MS + 1)).toBe(false);
  });
});

describe("refusals do not flood the audit trail", () => {
  it("1,000 refused POSTs later, the accepted writes are all there and the refusals are a few counted rows", async () => {
    const { origin, env: e } = await seeded("holes-flood");
    const write = await call(e, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...bearer, "Content-Type": "application/x-ndjson" },
      body: JSON.stringify({ loc: `${origin}/page/accepted` }),
    });
    expect(write.status).toBe(200);
    const cookie = await signIn(e, origin);
    const refused = (i: number): RequestInit =>
      i % 2 === 0
        ? // A script on the site's pages writing with the session cookie.
          { method: "POST", headers: { Cookie: cookie, "Content-Type": "application/json" }, body: "{}" }
        : // A page elsewhere (a sibling subdomain: the cookie is SameSite=Strict, not same-origin).
          { method: "POST", headers: { Cookie: cookie, Origin: origin.replace("https://", "https://evil."), "Sec-Fetch-Site": "same-site" } };
    const paths = ["/sitemap-admin/syncs", "/sitemap-admin/regenerate"];
    for (let i = 0; i < 1_000; i += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, j) => call(e, `${origin}${paths[(i + j) % 4 < 2 ? 0 : 1]}`, refused(i + j))));
      expect(answers.every((r) => r.status === 403)).toBe(true);
    }
    const audit = await auditOf(e, origin);
    expect(audit.entries.map(({ at: _at, ...rest }) => rest)).toEqual([
      { who: "token", method: "PUT", resource: "/sitemap-admin/urls", records: 1, status: 200 },
    ]);
    expect(refusedBy(audit.refused)).toEqual({ "not-for-browsers": 500, "cross-site": 500 });
    // A row per minute, reason and principal: a handful, however many refusals.
    expect(audit.refused.length).toBeLessThanOrEqual(6);
    const page = await (await call(e, `${origin}/sitemap-admin/`, { headers: bearer })).text();
    expect(page).toContain("<h3>Refused</h3>");
    expect(page).toMatch(/<td>cross-site<\/td><td class="num" data-figure="refused-count">\d+<\/td>/);
  });

  it(`refusal rows are capped at ${REFUSALS_KEPT} per site, and never take an audit row's place`, async () => {
    const { origin, env: e } = await seeded("holes-cap");
    const store = new D1AdminStateStore(e.DB);
    const t0 = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 3; i++)
      await store.recordAudit(origin, { at: t0 + i, who: "token", method: "PUT", resource: "/sitemap-admin/urls", records: 1, status: 200 });
    // Each refusal its own minute: as many rows as the cap allows, and then some.
    for (let i = 0; i < REFUSALS_KEPT + 50; i++) await store.recordRefusal(origin, { at: t0 + i * 60_000, reason: "cross-site", who: "someone" });
    const rows = await e.DB.prepare("SELECT COUNT(*) AS n FROM admin_refusals WHERE origin = ?1").bind(origin).first<{ n: number }>();
    expect(rows?.n).toBe(REFUSALS_KEPT);
    expect((await store.refusals(origin, 1))[0]?.minute).toBe(t0 + (REFUSALS_KEPT + 49) * 60_000);
    expect(await store.audit(origin, AUDIT_KEPT)).toHaveLength(3);
  });
});

describe("a URL_SOURCE=kv site without D1", () => {
  it("keeps the action's cooldown and the refusal counts in its writer object, as D1 does", async () => {
    const origin = freshOrigin("holes-kv");
    const e = { ...env, SITES: origin, URL_SOURCE: "kv", MANIFEST_STORE: "kv", DB: undefined } as unknown as Env;
    const store = services(e).admin!;
    expect(store.kind).toBe("durable-object");
    const now = Date.now();
    expect(await store.claimCooldown(origin, "regenerate", now, now + 300_000)).toBe(0);
    expect(await store.claimCooldown(origin, "regenerate", now + 1, now + 300_001)).toBe(now + 300_000);
    expect(await store.claimCooldown(origin, "regenerate", now + 300_000, now + 600_000)).toBe(0);
    for (let i = 0; i < 3; i++) await store.recordRefusal(origin, { at: Date.UTC(2026, 0, 1) + i, reason: "cross-site", who: "someone" });
    expect((await store.refusals(origin, 10)).map((r) => [r.reason, r.who, r.count])).toEqual([["cross-site", "someone", 3]]);
  });
});

describe("sign-in failures are the client's own", () => {
  it("11 cross-site sign-ins are refused uncounted: the bearer token and a same-site sign-in from that address still work", async () => {
    const { origin, env: e } = await seeded("holes-xsite-signin");
    const client = "203.0.113.43";
    for (let i = 0; i < 11; i++) {
      const res = await call(
        e,
        `${origin}/sitemap-admin/sign-in`,
        signInForm(
          `a-wrong-token-${i}-0123456789abcdef`,
          client,
          i % 2 === 0 ? { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" } : { Origin: "https://evil.example" },
        ),
      );
      expect(res.status).toBe(403);
      expect(res.headers.get("Set-Cookie")).toBeNull();
      expect(await res.text()).toContain("A sign-in from another site is refused.");
    }
    // Even the right token, cross-site, makes no session.
    const xsite = await call(e, `${origin}/sitemap-admin/sign-in`, signInForm(TOKEN, client, { "Sec-Fetch-Site": "cross-site" }));
    expect(xsite.status).toBe(403);
    expect(xsite.headers.get("Set-Cookie")).toBeNull();
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": client } })).status).toBe(200);
    const cookie = await signIn(e, origin, client);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);
  });

  it("IPv6 addresses in one /64 share a counter; another /64 has its own", async () => {
    const { origin, env: e } = await seeded("holes-ipv6");
    const wrong = (address: string) =>
      call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: "Bearer wrong-token", "CF-Connecting-IP": address } });
    // Ten failures, each from another address of 2001:db8:43:1::/64 (written every way an address can be).
    const addresses = [
      "2001:db8:43:1::1",
      "2001:0db8:0043:0001:0000:0000:0000:0002",
      "2001:DB8:43:1:ffff:ffff:ffff:ffff",
      "2001:db8:43:1:1:2:3:4",
      "2001:db8:43:1::192.0.2.1",
      "2001:db8:43:1:a::",
      "2001:db8:43:1::b",
      "2001:db8:43:1::c",
      "2001:db8:43:1::d",
      "2001:db8:43:1::e",
    ];
    for (const address of addresses) expect((await wrong(address)).status).toBe(401);
    // The eleventh, from yet another address of it, is over the limit, and so is the right token now.
    expect((await wrong("2001:db8:43:1::f")).status).toBe(429);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": "2001:db8:43:1::10" } })).status).toBe(429);
    // The next /64 is another client.
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { ...bearer, "CF-Connecting-IP": "2001:db8:43:2::1" } })).status).toBe(200);
    expect((await wrong("2001:db8:43:2::1")).status).toBe(401);
  });

  it("requests without a client address share no counter: the form refuses them, a wrong bearer token is counted against no one", async () => {
    const { origin, env: e } = await seeded("holes-no-address");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const noAddress: RequestInit = {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKEN }).toString(),
    };
    const form = await call(e, `${origin}/sitemap-admin/sign-in`, noAddress);
    expect(form.status).toBe(403);
    expect(form.headers.get("Set-Cookie")).toBeNull();
    for (let i = 0; i < 12; i++)
      expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Authorization: `Bearer wrong-${i}` } })).status).toBe(401);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: bearer })).status).toBe(200);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("without a client address"));
  });
});

describe("session rows hold nothing a guess of ADMIN_TOKEN can be checked against", () => {
  const encoder = new TextEncoder();
  const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const b64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
  const b64url = (bytes: ArrayBuffer) => b64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const encodings = (bytes: ArrayBuffer) => [hex(bytes), b64(bytes), b64url(bytes)];

  /** Digests and HMACs of the token alone (with every fixed label the code has used), as an offline guesser would compute them. */
  async function candidates(token: string): Promise<string[]> {
    const out: string[] = [token];
    for (const algorithm of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
      for (const input of [token, `session\n${token}`, `edge-sitemaps csrf v1\n${token}`])
        out.push(...encodings(await crypto.subtle.digest(algorithm, encoder.encode(input))));
    }
    const labels = ["", "session", "edge-sitemaps admin session tag v1", "edge-sitemaps admin session v2", "edge-sitemaps admin session v2\n"];
    for (const label of labels) {
      for (const [key, message] of [
        [token, label],
        [label || "k", token],
      ] as const) {
        const k = await crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
        out.push(...encodings(await crypto.subtle.sign("HMAC", k, encoder.encode(message))));
      }
    }
    return out;
  }

  it("no column of the session table equals, contains or is a cut of a digest of the token; sessions work; rotating the token ends them", async () => {
    const { origin, env: e } = await seeded("holes-session");
    const cookie = await signIn(e, origin);
    expect((await call(e, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(200);
    const { results } = await e.DB.prepare("SELECT * FROM admin_sessions WHERE origin = ?1").bind(origin).all<Record<string, unknown>>();
    expect(results).toHaveLength(1);
    const values = Object.values(results[0]!).map(String);
    const id = cookie.slice(`${SESSION_COOKIE}=`.length);
    const suspects = await candidates(TOKEN);
    for (const value of values) {
      expect(value).not.toContain(id); // nor the cookie itself
      for (const c of suspects) {
        expect(value.includes(c), `${value} holds a digest of the token`).toBe(false);
        if (value.length >= 8) expect(c.includes(value), `${value} is a cut of a digest of the token`).toBe(false);
      }
    }
    // Made under another token, the cookie is nothing: the sign-in page again.
    const rotated = { ...e, ADMIN_TOKEN: "another-admin-token-0123456789abcdef" } as Env;
    expect((await call(rotated, `${origin}/sitemap-admin/`, { headers: { Cookie: cookie } })).status).toBe(401);
    expect((await call(rotated, `${origin}/sitemap-admin/status`, { headers: { Cookie: cookie } })).status).toBe(401);
    // A session made under the new token works under it.
    const fresh = await call(rotated, `${origin}/sitemap-admin/sign-in`, signInForm("another-admin-token-0123456789abcdef", "198.51.100.43"));
    expect(fresh.status).toBe(303);
    expect((await call(rotated, `${origin}/sitemap-admin/status`, { headers: { Cookie: fresh.headers.get("Set-Cookie")!.split(";")[0]! } })).status).toBe(
      200,
    );
  });
});
