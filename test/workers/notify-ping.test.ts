/** Ping endpoints in workerd with real D1; the endpoints are a fake at the fetch boundary. */
import { describe, expect, it } from "vitest";
import { checkConfig, parseConfig } from "../../src/config.ts";
import { notifyLowWatermark, notifyStatus } from "../../src/notify/notifier.ts";
import { services } from "../../src/services.ts";
import { FakeEngine, HOUR, MINUTE, MemoryLog, hang, pages, remove, run, siteEnv, upsert } from "./notify-support.ts";
import { freshOrigin } from "./support.ts";

const T0 = Date.UTC(2026, 1, 1);
let templates = 0;
/** Retirement is global per template: every test gets its own endpoints. */
const template = (name = "engine") => `https://${name}-${++templates}.test/ping?sitemap={sitemap}`;

describe("ping endpoints", () => {
  it("GETs each template with the URL-encoded index URL after a change, and not again without one", async () => {
    const origin = freshOrigin("ping");
    const [a, b] = [template("a"), template("b")];
    const e = siteEnv(origin, { PING_URLS: `${a},\n ${b}` });
    const engine = new FakeEngine();
    await run(e, engine, T0);
    expect(engine.calls).toHaveLength(0); // no records yet: nothing to announce

    await upsert(e, pages(origin, 3), T0 + 1000);
    const report = await run(e, engine, T0 + 5 * MINUTE);
    const encoded = encodeURIComponent(`${origin}/sitemap.xml`);
    expect(engine.calls.map((c) => [c.method, c.url])).toEqual([
      ["GET", a.replace("{sitemap}", encoded)],
      ["GET", b.replace("{sitemap}", encoded)],
    ]);
    expect(report.targets.map((t) => t.result)).toEqual(["sent", "sent"]);

    await run(e, engine, T0 + HOUR);
    expect(engine.calls).toHaveLength(2);
    await remove(e, [`${origin}/page/2`], T0 + HOUR + 1000); // a deletion is a change too
    await run(e, engine, T0 + 2 * HOUR);
    expect(engine.calls).toHaveLength(4);
  });

  it("retires an endpoint answering 410 (logged once) and never calls it again; others go on", async () => {
    const origin = freshOrigin("ping");
    const [dead, alive] = [template("dead"), template("alive")];
    const e = siteEnv(origin, { PING_URLS: `${dead} ${alive}` });
    const engine = new FakeEngine((c) => new Response("Gone", { status: c.url.startsWith(dead.split("?")[0]!) ? 410 : 200 }));
    const log = new MemoryLog();
    await upsert(e, pages(origin, 2), T0);
    const first = await run(e, engine, T0 + 5 * MINUTE, log);
    expect(first.targets.map((t) => t.result)).toEqual(["retired", "sent"]);

    for (let h = 1; h <= 3; h++) {
      await upsert(e, pages(origin, 1, 100 + h), T0 + h * HOUR);
      await run(e, engine, T0 + h * HOUR + 5 * MINUTE, log);
    }
    const deadHost = new URL(dead.replace("{sitemap}", "x")).host;
    expect(engine.calls.filter((c) => new URL(c.url).host === deadHost)).toHaveLength(1);
    expect(engine.calls).toHaveLength(1 + 4);
    expect(log.lines.filter((l) => l.includes("retired"))).toHaveLength(1);

    const status = await notifyStatus(services(e));
    expect(status.find((s) => s.target === `ping ${dead}`)).toMatchObject({ retired: true, lastStatus: 410, pending: 0, nextAttemptAt: null });
    expect(status.find((s) => s.target === `ping ${alive}`)).toMatchObject({ retired: false, lastStatus: 200, pending: 0 });

    // A changed template is a new endpoint: called again.
    const fixed = dead.replace("/ping?", "/v2/ping?");
    engine.respond = () => new Response("ok");
    await upsert(e, pages(origin, 1, 200), T0 + 5 * HOUR);
    await run(siteEnv(origin, { PING_URLS: fixed }), engine, T0 + 5 * HOUR + 5 * MINUTE, log);
    expect(engine.calls.at(-1)!.url).toBe(fixed.replace("{sitemap}", encodeURIComponent(`${origin}/sitemap.xml`)));
  });

  it("a 404 retires too; 5xx and timeouts retry next run with backoff", async () => {
    const origin = freshOrigin("ping");
    const [gone, flaky, slow] = [template("gone"), template("flaky"), template("slow")];
    const e = siteEnv(origin, { PING_URLS: `${gone} ${flaky} ${slow}`, NOTIFY_TIMEOUT_MS: "100" });
    const engine = new FakeEngine((c) => {
      if (c.url.includes("gone")) return new Response("Not Found", { status: 404 });
      if (c.url.includes("flaky")) return new Response("busy", { status: 502 });
      return hang(c); // never answers: the timeout aborts it
    });
    await upsert(e, pages(origin, 1), T0);
    const report = await run(e, engine, T0 + 5 * MINUTE);
    expect(report.targets.map((t) => [t.result, t.status])).toEqual([
      ["retired", 404],
      ["retry", 502],
      ["retry", 0],
    ]);
    const slowStatus = (await notifyStatus(services(e))).find((s) => s.target === `ping ${slow}`);
    expect(slowStatus).toMatchObject({ lastStatus: 0, lastError: "timed out after 100 ms", pending: 1, failures: 1 });

    await run(e, engine, T0 + 6 * MINUTE); // inside the 5-minute backoff
    expect(engine.calls).toHaveLength(3);
    engine.respond = () => new Response("ok");
    await run(e, engine, T0 + 11 * MINUTE);
    expect(engine.calls.slice(3).map((c) => new URL(c.url).host.split("-")[0])).toEqual(["flaky", "slow"]);
  });

  it("has no default endpoints, and validates PING_URLS", () => {
    const base = { SITES: "https://example.com" };
    expect(parseConfig(base).notify.pingUrls).toEqual([]);
    for (const bad of ["https://engine.test/ping", "ftp://x.test/{sitemap}", "not a url {sitemap}"]) {
      const config = parseConfig({ ...base, PING_URLS: bad });
      expect(config.notify.pingUrls).toEqual([]);
      expect(config.disabled.map((d) => [d.feature, d.variable])).toEqual([["ping", "PING_URLS"]]);
    }
    expect(checkConfig({ ...base, PING_URLS: "https://engine.test/ping" }).map((e) => e.message)).toEqual([
      expect.stringMatching(/PING_URLS must list http\(s\) URL templates with \{sitemap\}.*\(entry 1 has no \{sitemap\} placeholder\)/),
    ]);
  });

  it("a ping target holds the tombstone watermark until it announced the change", async () => {
    const origin = freshOrigin("ping");
    const e = siteEnv(origin, { PING_URLS: template() });
    const engine = new FakeEngine();
    await upsert(e, pages(origin, 2), T0);
    await run(e, engine, T0 + 5 * MINUTE);
    expect((await notifyLowWatermark(services(e), origin))?.stamp).toBe(T0);
    await remove(e, [`${origin}/page/0`], T0 + HOUR);
    engine.respond = () => new Response(null, { status: 503 });
    await run(e, engine, T0 + HOUR + 5 * MINUTE);
    expect((await notifyLowWatermark(services(e), origin))?.stamp).toBe(T0);
  });
});
