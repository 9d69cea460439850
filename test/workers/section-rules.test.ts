/**
 * Section rules and stable sections, through the admin API on each record source: a record that
 * names no section follows SECTION_RULES, else keeps the section it has, else DEFAULT_SECTION; a
 * record re-sent without a section never moves (the bug: a new lastmod moved /products/… to
 * "pages" and rewrote two shards).
 */
import { env as baseEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sourceFixtures } from "./fixtures/sources.ts";
import { call, freshOrigin } from "./support.ts";

const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

describe.each(sourceFixtures)("section rules ($name)", (fixture) => {
  function site(vars: Record<string, string> = {}) {
    const origin = freshOrigin("sections");
    const env = fixture.env({ SITES: origin, ...vars });
    const put = async (records: unknown[]) => {
      const res = await call(env, `${origin}/sitemap-admin/urls`, {
        method: "PUT",
        headers: { ...AUTH, "Content-Type": "application/json" },
        body: JSON.stringify(records),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { inserted: number; updated: number; unchanged: number };
    };
    const sectionOf = async (path: string) => {
      const res = await call(env, `${origin}/sitemap-admin/urls?loc=${encodeURIComponent(origin + path)}`, { headers: AUTH });
      expect(res.status).toBe(200);
      return ((await res.json()) as { section: string }).section;
    };
    return { origin, env, put, sectionOf };
  }

  it("a record re-sent with only a new lastmod keeps its section", async () => {
    const { origin, put, sectionOf } = site();
    await put([{ loc: `${origin}/products/1`, section: "products", lastmod: "2026-01-01" }]);
    const again = await put([{ loc: `${origin}/products/1`, lastmod: "2026-02-01" }]);
    expect(again).toEqual({ received: 1, inserted: 0, updated: 1, unchanged: 0 });
    expect(await sectionOf("/products/1")).toBe("products");
    // Re-sent unchanged without a section: nothing written at all.
    expect(await put([{ loc: `${origin}/products/1`, lastmod: "2026-02-01" }])).toEqual({ received: 1, inserted: 0, updated: 0, unchanged: 1 });
    expect(await sectionOf("/products/1")).toBe("products");
  });

  it("a new record without a section follows the first matching rule, else DEFAULT_SECTION", async () => {
    const { origin, put, sectionOf } = site({ SECTION_RULES: "sale:/products/sale/, products:/products/ blog:/blog/" });
    await put([{ loc: `${origin}/products/sale/1` }, { loc: `${origin}/products/2` }, { loc: `${origin}/blog/a` }, { loc: `${origin}/about` }]);
    expect(await sectionOf("/products/sale/1")).toBe("sale");
    expect(await sectionOf("/products/2")).toBe("products");
    expect(await sectionOf("/blog/a")).toBe("blog");
    expect(await sectionOf("/about")).toBe("pages");
  });

  it("a rule moves an existing record; no rule and no section keeps it where it is; a named section wins", async () => {
    const { origin, put, sectionOf } = site();
    await put([{ loc: `${origin}/products/1` }, { loc: `${origin}/misc/1`, section: "misc" }]);
    expect(await sectionOf("/products/1")).toBe("pages");
    const ruled = fixture.env({ SITES: origin, SECTION_RULES: "products:/products/" });
    const res = await call(ruled, `${origin}/sitemap-admin/urls`, {
      method: "PUT",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify([{ loc: `${origin}/products/1` }, { loc: `${origin}/misc/1`, lastmod: "2026-03-01" }]),
    });
    expect(await res.json()).toEqual({ received: 2, inserted: 0, updated: 2, unchanged: 0 });
    expect(await sectionOf("/products/1")).toBe("products");
    expect(await sectionOf("/misc/1")).toBe("misc");
    await put([{ loc: `${origin}/products/1`, section: "archive" }]);
    expect(await sectionOf("/products/1")).toBe("archive");
  });

  it("a deleted record brought back without a section is new: it takes the rule or the default", async () => {
    const { origin, env, put, sectionOf } = site();
    await put([{ loc: `${origin}/old/1`, section: "archive" }]);
    const del = await call(env, `${origin}/sitemap-admin/urls`, {
      method: "DELETE",
      headers: { ...AUTH, "Content-Type": "application/json" },
      body: JSON.stringify([`${origin}/old/1`]),
    });
    expect(del.status).toBe(200);
    expect(await put([{ loc: `${origin}/old/1` }])).toEqual({ received: 1, inserted: 1, updated: 0, unchanged: 0 });
    expect(await sectionOf("/old/1")).toBe("pages");
  });
});

describe("section rules on D1: a move is noted only when the section really changes", () => {
  it("re-sending records without a section writes no url_moves row; a rule that moves them writes one each", async () => {
    const origin = freshOrigin("moves");
    const put = async (vars: Record<string, string>, records: unknown[]) => {
      const res = await call({ ...baseEnv, URL_SOURCE: "d1", SITES: origin, ...vars } as Env, `${origin}/sitemap-admin/urls`, {
        method: "PUT",
        headers: { ...AUTH, "Content-Type": "application/json" },
        body: JSON.stringify(records),
      });
      expect(res.status).toBe(200);
    };
    const moves = async () =>
      (await baseEnv.DB.prepare("SELECT COUNT(*) AS n FROM url_moves WHERE origin = ?1").bind(origin).first<{ n: number }>())?.n ?? 0;
    await put({}, [
      { loc: `${origin}/products/1`, section: "products" },
      { loc: `${origin}/products/2`, section: "products" },
    ]);
    await put({}, [
      { loc: `${origin}/products/1`, lastmod: "2026-01-02" },
      { loc: `${origin}/products/2`, lastmod: "2026-01-02" },
    ]);
    expect(await moves()).toBe(0);
    await put({ SECTION_RULES: "catalogue:/products/" }, [{ loc: `${origin}/products/1` }, { loc: `${origin}/products/2` }]);
    expect(await moves()).toBe(2);
    const { results } = await baseEnv.DB.prepare("SELECT section FROM urls WHERE origin = ?1 ORDER BY id").bind(origin).all<{ section: string }>();
    expect(results.map((r) => r.section)).toEqual(["catalogue", "catalogue"]);
  });
});
