/**
 * The ingest API against the real Worker entry, real D1 in workerd: auth, validation before any
 * write, atomic and idempotent batches, tombstones, limits and hostile input. Every DB claim is
 * checked by reading rows back.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin } from "../../src/admin/app.ts";
import { ApiErrorSchema, DeleteResultSchema, StoredRecordSchema, UpsertResultSchema } from "../../src/admin/schemas.ts";
import worker from "../../src/index.ts";

const SITE = "http://localhost:8787"; // SITES in wrangler.jsonc
const ADMIN = `${SITE}/sitemap-admin/urls`;
const AUTH = { Authorization: "Bearer test-admin-token-0123456789abcdef" };

type Vars = Record<string, string | undefined>;

async function call(url: string, init: RequestInit = {}, vars: Vars = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init) as Request<unknown, IncomingRequestCfProperties>, { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

function send(method: "PUT" | "DELETE", body: unknown, vars: Vars = {}): Promise<Response> {
  return call(ADMIN, { method, headers: { ...AUTH, "Content-Type": "application/json" }, body: JSON.stringify(body) }, vars);
}

function sendNdjson(method: "PUT" | "DELETE", text: string, vars: Vars = {}): Promise<Response> {
  return call(ADMIN, { method, headers: { ...AUTH, "Content-Type": "application/x-ndjson" }, body: text }, vars);
}

function get(loc: string, vars: Vars = {}): Promise<Response> {
  return call(`${ADMIN}?loc=${encodeURIComponent(loc)}`, { headers: AUTH }, vars);
}

async function apiError(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return ApiErrorSchema.parse(await response.json());
}

/** A \`urls\` row as D1 stores it. */
interface Row {
  id: number;
  origin: string;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: string | null;
  priority: number | null;
  ext: string | null;
  size: number;
  updated_at: number;
  deleted: number;
}

/** Every row under a path prefix of SITE, in key order. */
async function rows(prefix: string): Promise<Row[]> {
  const { results } = await env.DB.prepare("SELECT * FROM urls WHERE loc >= ?1 AND loc < ?2 ORDER BY id")
    .bind(`${SITE}${prefix}`, `${SITE}${prefix}\uffff`)
    .all<Row>();
  return results;
}

const records = (prefix: string, n: number, extra: (i: number) => object = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({ loc: `${SITE}${prefix}${i}`, lastmod: "2024-05-01", ...extra(i) }));

/** Lets the wall clock move on, so a new change stamp would differ from the last one. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

afterEach(() => {
  vi.restoreAllMocks();
});

describe("auth", () => {
  it("is 404 on every admin path when no ADMIN_TOKEN is configured", async () => {
    for (const vars of [{ ADMIN_TOKEN: undefined }, { ADMIN_TOKEN: "" }, { ADMIN_TOKEN: " \t" }]) {
      expect((await send("PUT", records("/noauth/", 1), vars)).status).toBe(404);
      expect((await send("DELETE", [`${SITE}/noauth/0`], vars)).status).toBe(404);
      expect((await get(`${SITE}/noauth/0`, vars)).status).toBe(404);
      expect((await call(`${SITE}/sitemap-admin/openapi.json`, { headers: AUTH }, vars)).status).toBe(404);
    }
    expect(await rows("/noauth/")).toEqual([]);
  });

  it("is 401 with WWW-Authenticate and no detail for a wrong or missing token, compared in constant time", async () => {
    const timingSafeEqual = vi.spyOn(crypto.subtle, "timingSafeEqual");
    const attempts: Record<string, string>[] = [
      { Authorization: "Bearer wrong-token" },
      { Authorization: "Basic dGVzdA==" },
      {},
      { Authorization: "Bearer test-admin-token-0123456789abcdef-longer" },
    ];
    for (const headers of attempts) {
      const response = await call(ADMIN, {
        method: "PUT",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify(records("/auth/", 1)),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ error: "unauthorized" });
    }
    expect(timingSafeEqual).toHaveBeenCalled();
    timingSafeEqual.mockClear();
    expect((await send("PUT", records("/auth/", 1))).status).toBe(200);
    expect(timingSafeEqual).toHaveBeenCalledTimes(1);
    expect((await rows("/auth/")).map((r) => r.loc)).toEqual([`${SITE}/auth/0`]);
  });

  it("is off (404, naming nothing) when the token breaks its rule; the log names ADMIN_TOKEN and the rule, never the value", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    for (const [token, path] of [
      ["secret token!", "/auth-bad/"],
      ["short-token-31-characters-long-", "/auth-short/"],
    ] as const) {
      const response = await send("PUT", records(path, 1), { ADMIN_TOKEN: token });
      expect(response.status).toBe(404);
      expect(await response.text()).not.toMatch(/ADMIN_TOKEN|configuration|secret|short-token/);
      expect(await rows(path)).toEqual([]);
    }
    const logged = log.mock.calls.map((call) => String(call[0]));
    expect(logged).toContain(
      "configuration error: ADMIN_TOKEN must be a bearer token of at least 32 characters: letters, digits and - . _ ~ + / (optionally ending in =) (admin is off)",
    );
    expect(logged.join("\n")).not.toMatch(/secret token|short-token/);
    log.mockRestore();
  });
});

describe("PUT /sitemap-admin/urls", () => {
  it("upserts a JSON batch, reports counts, and reads records back with the loc normalised", async () => {
    const response = await send("PUT", [
      { loc: `${SITE}/basic/a`, lastmod: "2024-05-01T10:00:00+02:00", changefreq: "daily", priority: 0.8, section: "blog" },
      { loc: "HTTP://LOCALHOST:8787/basic/x/../b?q=%7e" },
      { loc: `${SITE}/basic/c`, priority: "0.3", lastmod: "", changefreq: null },
    ]);
    expect(response.status).toBe(200);
    expect(UpsertResultSchema.parse(await response.json())).toEqual({ received: 3, inserted: 3, updated: 0, unchanged: 0 });

    const a = await get(`${SITE}/basic/a`);
    expect(a.status).toBe(200);
    const stored = StoredRecordSchema.parse(await a.json());
    expect(stored).toMatchObject({
      loc: `${SITE}/basic/a`,
      origin: SITE,
      section: "blog",
      lastmod: "2024-05-01T10:00:00+02:00",
      changefreq: "daily",
      priority: 0.8,
    });

    // Any spelling that normalises to the stored loc finds it.
    const b = await get("http://localhost:8787/basic/./b?q=~");
    expect(b.status).toBe(200);
    expect(StoredRecordSchema.parse(await b.json())).toMatchObject({ loc: `${SITE}/basic/b?q=~`, section: "pages", lastmod: null, priority: null });

    const dbRows = await rows("/basic/");
    expect(dbRows.map((r) => [r.loc, r.section, r.priority, r.deleted])).toEqual([
      [`${SITE}/basic/a`, "blog", 0.8, 0],
      [`${SITE}/basic/b?q=~`, "pages", null, 0],
      [`${SITE}/basic/c`, "pages", 0.3, 0],
    ]);
  });

  it("a batch of ADMIN_MAX_RECORDS's maximum (5,000) fits one invocation's 1,000 D1 queries: written, then re-sent changed, then deleted", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const vars = { ADMIN_MAX_RECORDS: "5000", ADMIN_MAX_BYTES: String(2 * 1024 * 1024) };
    const batch = records("/max-batch/", 5_000, (i) => ({ section: i % 2 ? "blog" : "pages", lastmod: "2024-05-01" }));
    expect((await send("PUT", batch, vars)).status).toBe(200);
    // Every record changed, half of them moving section: the costliest batch of this size.
    const changed = records("/max-batch/", 5_000, (i) => ({ section: i % 2 ? "pages" : "blog", lastmod: "2024-06-01" }));
    const again = await send("PUT", changed, vars);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ received: 5_000, updated: 5_000 });
    const gone = await send(
      "DELETE",
      changed.map((r) => r.loc),
      vars,
    );
    expect(gone.status).toBe(200);
    expect(await gone.json()).toMatchObject({ deleted: 5_000 });
  });

  it("is idempotent: the same batch twice leaves identical rows and change stamps", async () => {
    const batch = records("/idem/", 250, (i) => ({ priority: (i % 10) / 10, changefreq: "weekly" }));
    const first = await send("PUT", batch);
    expect(await first.json()).toEqual({ received: 250, inserted: 250, updated: 0, unchanged: 0 });
    const before = await rows("/idem/");
    expect(before).toHaveLength(250);

    await tick();
    const second = await send("PUT", batch);
    expect(await second.json()).toEqual({ received: 250, inserted: 0, updated: 0, unchanged: 250 });
    expect(await rows("/idem/")).toEqual(before);

    // NDJSON of the same records is the same batch.
    await tick();
    const third = await sendNdjson("PUT", `${batch.map((r) => JSON.stringify(r)).join("\n")}\n`);
    expect(await third.json()).toEqual({ received: 250, inserted: 0, updated: 0, unchanged: 250 });
    expect(await rows("/idem/")).toEqual(before);

    // Changing two records moves exactly their stamps; keys never change.
    await tick();
    const changed = batch.map((r, i) => (i === 7 ? { ...r, lastmod: "2024-06-01" } : i === 99 ? { ...r, section: "other" } : r));
    const fourth = await send("PUT", changed);
    expect(await fourth.json()).toEqual({ received: 250, inserted: 0, updated: 2, unchanged: 248 });
    const after = await rows("/idem/");
    for (let i = 0; i < 250; i++) {
      expect(after[i]!.id).toBe(before[i]!.id);
      if (i === 7 || i === 99) expect(after[i]!.updated_at).toBeGreaterThan(before[i]!.updated_at);
      else expect(after[i]).toEqual(before[i]);
    }
    expect(after[7]!.lastmod).toBe("2024-06-01");
    expect(after[99]!.section).toBe("other");
  });

  it("rejects a batch of 1,000 with one bad record: 422 naming it, and nothing written", async () => {
    // Half of the batch exists already; the other half would be new.
    const batch = records("/one-bad/", 1000);
    expect((await send("PUT", batch.slice(0, 500))).status).toBe(200);
    const before = await rows("/one-bad/");
    expect(before).toHaveLength(500);

    const bad = batch.map((r, i) => (i === 737 ? { ...r, priority: 1.5 } : { ...r, lastmod: "2025-01-01" }));
    const response = await send("PUT", bad);
    expect(response.status).toBe(422);
    const body = await apiError(response);
    expect(body.error).toBe("validation_failed");
    expect(body.issueCount).toBe(1);
    expect(body.issues).toEqual([
      { index: 737, line: 1, loc: `${SITE}/one-bad/737`, field: "priority", rule: "priority-range", message: expect.stringContaining("1.5") },
    ]);
    expect(await rows("/one-bad/")).toEqual(before);

    // In NDJSON the issue names the body line as well.
    const ndjson = await sendNdjson("PUT", bad.map((r) => JSON.stringify(r)).join("\n"));
    expect(ndjson.status).toBe(422);
    expect((await apiError(ndjson)).issues).toEqual([expect.objectContaining({ index: 737, line: 738, rule: "priority-range" })]);
    expect(await rows("/one-bad/")).toEqual(before);
  });

  it("writes a valid batch all or nothing: a failure in its last statement leaves no row behind", async () => {
    const batch = records("/atomic/", 300);
    const poison = `${SITE}/atomic/299`;
    await env.DB.prepare(
      `CREATE TRIGGER atomic_test_poison BEFORE INSERT ON urls WHEN NEW.loc = '${poison}' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`,
    ).run();
    try {
      const response = await send("PUT", batch);
      expect(response.status).toBe(500);
      expect((await apiError(response)).error).toBe("write_failed");
      expect(await rows("/atomic/")).toEqual([]);
    } finally {
      await env.DB.prepare("DROP TRIGGER atomic_test_poison").run();
    }
    const retry = await send("PUT", batch);
    expect(await retry.json()).toEqual({ received: 300, inserted: 300, updated: 0, unchanged: 0 });
    expect(await rows("/atomic/")).toHaveLength(300);
  });

  it("rejects hostile input, each record with its rule, and writes nothing", async () => {
    const hostile = [
      { loc: `${SITE}/hostile/ctl\u0001x` },
      { loc: `${SITE}/hostile/tab\tx` },
      { loc: `${SITE}/hostile/${"a".repeat(2048)}` },
      { loc: "https://other.example/hostile/x" },
      { loc: "javascript:alert(1)" },
      { loc: `${SITE}/hostile/p`, priority: 1.5 },
      { loc: `${SITE}/hostile/l`, lastmod: "yesterday" },
      { loc: `${SITE}/hostile/c`, changefreq: "Weekly" },
      { loc: `${SITE}/hostile/dup` },
      { loc: `${SITE}/hostile/./dup` },
      { loc: `${SITE}/hostile/s`, section: "../etc" },
      { loc: `${SITE}/hostile/u`, script: "<x>" },
      { loc: `${SITE}/hostile/t`, lastmod: 20240101 },
      "not a record",
      { loc: `${SITE}/hostile/ok` },
    ];
    const response = await send("PUT", hostile);
    expect(response.status).toBe(422);
    const body = await apiError(response);
    const ruleOf = new Map(body.issues!.map((i) => [i.index, `${i.field}:${i.rule}`]));
    expect(Object.fromEntries(ruleOf)).toEqual({
      0: "loc:xml-char",
      1: "loc:absolute-url",
      2: "loc:length",
      3: "loc:site",
      4: "loc:scheme",
      5: "priority:priority-range",
      6: "lastmod:w3c-datetime",
      7: "changefreq:changefreq-enum",
      9: "loc:duplicate-loc",
      10: "section:section-name",
      11: "script:unknown-field",
      12: "lastmod:type",
      13: "record:type",
    });
    expect(body.issueCount).toBe(13);
    // Hostile values are echoed JSON-escaped and cut, never raw and never in full.
    expect(body.issues!.find((i) => i.index === 2)!.loc!.length).toBeLessThan(2200);
    expect(JSON.stringify(body)).not.toContain("\u0001");
    expect(await rows("/hostile/")).toEqual([]);
  });

  it("lists at most 1,000 issues of a flood of bad records, counts all, and says so", async () => {
    // 300 records × 20 bad images: 6,000 issues, of which only the first 1,000 are kept.
    const images = Array.from({ length: 20 }, () => ({ loc: "not a url" }));
    const records = Array.from({ length: 300 }, (_, i) => ({ loc: `${SITE}/flood/${i}`, images }));
    const response = await send("PUT", records);
    expect(response.status).toBe(422);
    const body = await apiError(response);
    expect(body.issues).toHaveLength(1_000);
    expect(body.issueCount).toBe(6_000);
    expect(body.message).toContain("6000 issues, the first 1000 listed");
    expect(await rows("/flood/")).toEqual([]);
  });

  it("accepts records of any configured site, whatever host the admin request went to", async () => {
    const vars = { SITES: `${SITE} https://shop.example` };
    const ok = await send("PUT", [{ loc: "https://shop.example/cross/1" }, { loc: `${SITE}/cross/1` }], vars);
    expect(await ok.json()).toEqual({ received: 2, inserted: 2, updated: 0, unchanged: 0 });
    const back = await get("https://SHOP.example:443/cross/1", vars);
    expect(StoredRecordSchema.parse(await back.json())).toMatchObject({ loc: "https://shop.example/cross/1", origin: "https://shop.example" });

    const rejected = await send("PUT", [{ loc: "https://evil.example/cross/1" }, { loc: "http://shop.example/cross/2" }], vars);
    expect(rejected.status).toBe(422);
    expect((await apiError(rejected)).issues!.map((i) => [i.index, i.rule])).toEqual([
      [0, "site"],
      [1, "site"],
    ]);
    // Without the second site configured, the same record is rejected.
    const single = await send("PUT", [{ loc: "https://shop.example/cross/3" }]);
    expect((await apiError(single)).issues!.map((i) => i.rule)).toEqual(["site"]);
  });

  it("answers an empty batch with zero counts", async () => {
    expect(await (await send("PUT", [])).json()).toEqual({ received: 0, inserted: 0, updated: 0, unchanged: 0 });
    expect(await (await sendNdjson("PUT", "\n\n")).json()).toEqual({ received: 0, inserted: 0, updated: 0, unchanged: 0 });
  });
});

describe("limits and malformed bodies", () => {
  it("is 413 past the record limit (default 5,000) in JSON and NDJSON, and writes nothing", async () => {
    const batch = Array.from({ length: 5_001 }, (_, i) => ({ loc: `${SITE}/big/${i}` }));
    const json = await send("PUT", batch);
    expect(json.status).toBe(413);
    const body = await apiError(json);
    expect(body).toMatchObject({ error: "payload_too_large", limits: { maxRecords: 5_000, maxBytes: 1024 * 1024 } });
    const ndjson = await sendNdjson("PUT", batch.map((r) => JSON.stringify(r)).join("\n"));
    expect(ndjson.status).toBe(413);
    expect(await rows("/big/")).toEqual([]);

    const configured = await send("PUT", records("/big/", 51), { ADMIN_MAX_RECORDS: "50" });
    expect(configured.status).toBe(413);
    expect((await apiError(configured)).limits).toEqual({ maxRecords: 50, maxBytes: 1024 * 1024 });
    expect((await send("PUT", records("/big/", 50), { ADMIN_MAX_RECORDS: "50" })).status).toBe(200);
  });

  it("is 413 past the byte limit, declared or streamed without a length", async () => {
    const vars = { ADMIN_MAX_BYTES: "2048" };
    const text = JSON.stringify(records("/bytes/", 60));
    expect(text.length).toBeGreaterThan(2048);
    const declared = await send("PUT", records("/bytes/", 60), vars);
    expect(declared.status).toBe(413);
    expect((await apiError(declared)).message).toContain("2048");

    // A chunked body that never says how long it is: cut off once past the limit.
    let pulled = 0;
    const chunk = new TextEncoder().encode(`${JSON.stringify({ loc: `${SITE}/bytes/x` })}\n`);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await call(ADMIN, { method: "PUT", headers: { ...AUTH, "Content-Type": "application/x-ndjson" }, body: endless }, vars);
    expect(streamed.status).toBe(413);
    expect(pulled).toBeLessThan(2048 + 4 * chunk.byteLength);
    expect(await rows("/bytes/")).toEqual([]);
  });

  it("is 400 naming the line for malformed JSON or NDJSON", async () => {
    const cases: [string, string, number, RegExp][] = [
      ["application/json", '[\n  {"loc": "http://localhost:8787/m/1"},\n  {"loc": "http://localhost:8787/m/2",}\n]', 3, /record 1/],
      ["application/json", '[\n{"loc": "http://localhost:8787/m/1"},\n\n{"loc": "http://localhost:8787/m/2"}\n', 4, /not closed/],
      ["application/json", '[{"loc": "http://localhost:8787/m/1"}]\n garbage', 2, /after the closing/],
      ["application/json", '{"loc": "http://localhost:8787/m/1"}', 1, /JSON array/],
      ["application/json", '[\n{"loc": "a"},,\n]', 2, /missing value/],
      ["application/json", "", 1, /empty/],
      ["application/x-ndjson", '{"loc": "http://localhost:8787/m/1"}\r\n\r\n{"loc": "http://localhost:8787/m/2"}\n{"loc": \n', 4, /not valid JSON/],
      ["application/x-ndjson", '{"loc": "http://localhost:8787/m/1"}\n{"loc": "http://localhost:8787/m/2"} x', 2, /not valid JSON/],
    ];
    for (const [type, body, line, message] of cases) {
      const response = await call(ADMIN, { method: "PUT", headers: { ...AUTH, "Content-Type": type }, body });
      expect(response.status, body).toBe(400);
      const error = await apiError(response);
      expect(error, body).toMatchObject({ error: "invalid_body", line });
      expect(error.message, body).toMatch(message);
      expect(error.message, body).toMatch(new RegExp(`^line ${line}: `));
    }
    expect(await rows("/m/")).toEqual([]);
  });

  it("is 400 for a body that is not UTF-8, naming the NDJSON line", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"loc":"http://localhost:8787/u/1"}\n{"loc":"http://localhost:8787/u/'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}\n'),
    ]);
    const response = await call(ADMIN, { method: "PUT", headers: { ...AUTH, "Content-Type": "application/x-ndjson" }, body: bytes });
    expect(response.status).toBe(400);
    expect(await apiError(response)).toMatchObject({ error: "invalid_body", line: 2, message: expect.stringContaining("UTF-8") });
  });

  it("is 415 for other content types or charsets", async () => {
    for (const type of ["text/plain", "application/xml", "application/json; charset=iso-8859-1", ""]) {
      const headers: Record<string, string> = { ...AUTH };
      if (type) headers["Content-Type"] = type;
      const response = await call(ADMIN, { method: "PUT", headers, body: "[]" });
      expect(response.status, type).toBe(415);
      expect((await apiError(response)).error).toBe("unsupported_media_type");
    }
    const ok = await call(ADMIN, { method: "PUT", headers: { ...AUTH, "Content-Type": "Application/JSON; Charset=UTF-8" }, body: "[]" });
    expect(ok.status).toBe(200);
  });
});

describe("DELETE /sitemap-admin/urls", () => {
  it("tombstones records (deleted=1, stamp bumped), idempotently, and a later PUT brings the same key back", async () => {
    expect((await send("PUT", records("/del/", 5))).status).toBe(200);
    const before = await rows("/del/");
    await tick();

    const response = await sendNdjson(
      "DELETE",
      [`"${SITE}/del/1"`, `{"loc": "${SITE}/del/3", "lastmod": "2024-01-01"}`, `"${SITE}/del/never"`].join("\n"),
    );
    expect(response.status).toBe(200);
    expect(DeleteResultSchema.parse(await response.json())).toEqual({ received: 3, deleted: 2, alreadyDeleted: 0, notFound: 1 });
    const after = await rows("/del/");
    expect(after).toHaveLength(5);
    for (const i of [0, 1, 2, 3, 4]) {
      if (i === 1 || i === 3) {
        expect(after[i]).toMatchObject({ id: before[i]!.id, deleted: 1 });
        expect(after[i]!.updated_at).toBeGreaterThan(before[i]!.updated_at);
      } else {
        expect(after[i]).toEqual(before[i]);
      }
    }
    const gone = await get(`${SITE}/del/1`);
    expect(gone.status).toBe(404);
    expect(await apiError(gone)).toMatchObject({ error: "not_found", message: expect.stringContaining("deleted") });

    // Deleting again changes nothing, not even the stamps.
    await tick();
    const again = await send("DELETE", [`${SITE}/del/1`, `${SITE}/del/3`]);
    expect(await again.json()).toEqual({ received: 2, deleted: 0, alreadyDeleted: 2, notFound: 0 });
    expect(await rows("/del/")).toEqual(after);

    // A deleted loc sent again is inserted under its old key.
    await tick();
    const back = await send("PUT", [
      { loc: `${SITE}/del/1`, lastmod: "2024-05-01" },
      { loc: `${SITE}/del/2`, lastmod: "2024-05-01" },
    ]);
    expect(await back.json()).toEqual({ received: 2, inserted: 1, updated: 0, unchanged: 1 });
    const revived = (await rows("/del/"))[1]!;
    expect(revived).toMatchObject({ id: before[1]!.id, deleted: 0 });
    expect(revived.updated_at).toBeGreaterThan(after[1]!.updated_at);
  });

  it("validates the whole batch first: a bad or foreign loc rejects it all", async () => {
    expect((await send("PUT", records("/del-bad/", 3))).status).toBe(200);
    const before = await rows("/del-bad/");
    const response = await send("DELETE", [`${SITE}/del-bad/0`, "https://other.example/x", 42, { nope: 1 }, `${SITE}/del-bad/./0`]);
    expect(response.status).toBe(422);
    expect((await apiError(response)).issues!.map((i) => [i.index, i.rule])).toEqual([
      [1, "site"],
      [2, "type"],
      [3, "required"],
      [4, "duplicate-loc"],
    ]);
    expect(await rows("/del-bad/")).toEqual(before);
  });
});

describe("URL_SOURCE=kv", () => {
  it("writes through the configured source's writer: counts, idempotency, tombstones and read-back on KV", async () => {
    const vars = { URL_SOURCE: "kv" };
    const batch = records("/kv/", 30, (i) => ({ priority: i % 2 === 0 ? 0.5 : null }));
    expect(await (await send("PUT", batch, vars)).json()).toEqual({ received: 30, inserted: 30, updated: 0, unchanged: 0 });
    expect(await (await send("PUT", batch, vars)).json()).toEqual({ received: 30, inserted: 0, updated: 0, unchanged: 30 });
    const back = await get(`${SITE}/kv/4`, vars);
    expect(StoredRecordSchema.parse(await back.json())).toMatchObject({ loc: `${SITE}/kv/4`, priority: 0.5, lastmod: "2024-05-01" });
    expect(await (await send("DELETE", [`${SITE}/kv/4`, `${SITE}/kv/nope`], vars)).json()).toEqual({
      received: 2,
      deleted: 1,
      alreadyDeleted: 0,
      notFound: 1,
    });
    expect((await get(`${SITE}/kv/4`, vars)).status).toBe(404);
    // Nothing went to D1.
    expect(await rows("/kv/")).toEqual([]);
  });
});

describe("GET /sitemap-admin/urls", () => {
  it("is 400 without loc, 422 for a loc that cannot be stored, 404 when absent or of no site of this host", async () => {
    const missing = await call(ADMIN, { headers: AUTH });
    expect(missing.status).toBe(400);
    expect((await apiError(missing)).error).toBe("invalid_query");
    const twice = await call(`${ADMIN}?loc=a&loc=b`, { headers: AUTH });
    expect(twice.status).toBe(400);

    // Another origin's loc is not found here (rule site), the same whether another tenant has it or no one: issue 50.
    const foreign = await get("https://other.example/page");
    expect(foreign.status).toBe(404);
    expect((await apiError(foreign)).issues).toEqual([expect.objectContaining({ field: "loc", rule: "site" })]);
    const script = await get("javascript:alert(1)");
    expect((await apiError(script)).issues).toEqual([expect.objectContaining({ rule: "scheme" })]);

    const absent = await get(`${SITE}/get/never`);
    expect(absent.status).toBe(404);
    expect((await apiError(absent)).error).toBe("not_found");
  });

  it("serves an OpenAPI description of the API", async () => {
    const response = await call(`${SITE}/sitemap-admin/openapi.json`, { headers: AUTH });
    expect(response.status).toBe(200);
    const doc = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths["/sitemap-admin/urls"]!).sort()).toEqual(["delete", "get", "put"]);
    // Every route the admin app serves is described, and nothing else: both come from one definition.
    // (a route with a query validator is two entries of admin.routes: the validator and the handler)
    const served = [
      ...new Set(
        admin.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} /sitemap-admin${r.path.replace(/:(\w+)/g, "{$1}")}`),
      ),
    ];
    const described = Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    expect(described.sort()).toEqual(served.sort());
    expect(described).toEqual(expect.arrayContaining(["get /sitemap-admin/status", "post /sitemap-admin/regenerate", "get /sitemap-admin/openapi.json"]));
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(["Error", "Issue", "RecordInput", "UpsertResult", "DeleteResult", "StoredRecord"]),
    );
    // Every reference points at a component of this document.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(doc.components.schemas[ref.replace("#/components/schemas/", "")], ref).toBeDefined();
    expect((doc.components.schemas["Error"] as { properties: { issues: { items: unknown } } }).properties.issues.items).toEqual({
      $ref: "#/components/schemas/Issue",
    });
    // The record is the one declaration of src/core/record, with its real structure (not "unknown").
    const record = doc.components.schemas["RecordInput"] as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { maxLength?: number; anyOf?: unknown[] }>;
    };
    expect(record.required).toEqual(["loc"]);
    expect(record.additionalProperties).toBe(false);
    expect(Object.keys(record.properties)).toEqual(["loc", "lastmod", "changefreq", "priority", "section", "images", "videos", "news", "alternates"]);
    expect(record.properties["loc"]!.maxLength).toBe(2047);
    expect(JSON.stringify(record.properties["videos"])).toContain("thumbnail_loc");
  });
});
