import { describe, expect, it } from "vitest";
import { ConfigError } from "../error.ts";
import { parseConfig } from "../parse.ts";
import { readVariable } from "../variable.ts";
import { CRAWLER_COUNT_FLUSH_SECONDS, CRAWLER_IP_RANGES, CRAWLER_STALE_DAYS } from "./crawlers.ts";

const ranges = (value: string) => readVariable({ CRAWLER_IP_RANGES: value }, CRAWLER_IP_RANGES);

describe("CRAWLER_IP_RANGES", () => {
  it("defaults to Google's and Bing's published lists", () => {
    expect(readVariable({}, CRAWLER_IP_RANGES)).toEqual([
      { name: "googlebot", url: "https://developers.google.com/static/search/apis/ipranges/googlebot.json" },
      { name: "bingbot", url: "https://www.bing.com/toolbox/bingbot.json" },
    ]);
  });

  it("reads space-separated name=URL pairs in order; http only to a loopback host; none is no lists", () => {
    expect(ranges(" googlebot=http://127.0.0.1:8788/g.json\n\tbingbot=http://localhost:8788/b.json  my-bot2=https://bots.example/list.json ")).toEqual([
      { name: "googlebot", url: "http://127.0.0.1:8788/g.json" },
      { name: "bingbot", url: "http://localhost:8788/b.json" },
      { name: "my-bot2", url: "https://bots.example/list.json" },
    ]);
    expect(ranges("none")).toEqual([]);
    // Empty is unset, as for every variable: the default.
    expect(ranges("  ")).toHaveLength(2);
  });

  it("refuses a bad name, a repeated name, a URL that is not https, too many entries; naming the entry, never the value", () => {
    for (const value of [
      "googlebot",
      "=https://a.example/l.json",
      "Googlebot=https://a.example/l.json",
      "2bot=https://a.example/l.json",
      `${"a".repeat(33)}=https://a.example/l.json`,
      "google_bot=https://a.example/l.json",
      "googlebot=http://a.example/l.json",
      "googlebot=ftp://a.example/l.json",
      "googlebot=secret-not-a-url",
      "googlebot=https://a.example/l.json googlebot=https://b.example/l.json",
      "none googlebot=https://a.example/l.json",
      Array.from({ length: 11 }, (_, i) => `bot${i}=https://a.example/${i}.json`).join(" "),
    ]) {
      expect(() => ranges(value), value).toThrow(ConfigError);
    }
    expect(() => ranges("googlebot=https://a.example/l.json secret=http://secret.example/x")).toThrow(
      /CRAWLER_IP_RANGES must be .* \(entry 2 is not one\)$/,
    );
    expect(() => ranges("googlebot=https://a.example/l.json secret=http://secret.example/x")).not.toThrow(/secret/);
    expect(() => ranges("a=https://a.example/1 a=https://a.example/2")).toThrow(/\(entry 2 repeats a name\)$/);
  });
});

describe("CRAWLER_STALE_DAYS", () => {
  it("is a whole number of days from 1 to 365, 14 by default", () => {
    expect(readVariable({}, CRAWLER_STALE_DAYS)).toBe(14);
    expect(readVariable({ CRAWLER_STALE_DAYS: "365" }, CRAWLER_STALE_DAYS)).toBe(365);
    for (const value of ["0", "366", "7.5", "-1", "two weeks"])
      expect(() => readVariable({ CRAWLER_STALE_DAYS: value }, CRAWLER_STALE_DAYS), value).toThrow(ConfigError);
  });
});

describe("CRAWLER_COUNT_FLUSH_SECONDS", () => {
  it("is a whole number of seconds from 0 (no timer) to 25 (within waitUntil's 30 s), 20 by default", () => {
    expect(readVariable({}, CRAWLER_COUNT_FLUSH_SECONDS)).toBe(20);
    expect(readVariable({ CRAWLER_COUNT_FLUSH_SECONDS: "0" }, CRAWLER_COUNT_FLUSH_SECONDS)).toBe(0);
    expect(readVariable({ CRAWLER_COUNT_FLUSH_SECONDS: "25" }, CRAWLER_COUNT_FLUSH_SECONDS)).toBe(25);
    for (const value of ["26", "30", "1.5", "-1", "soon"])
      expect(() => readVariable({ CRAWLER_COUNT_FLUSH_SECONDS: value }, CRAWLER_COUNT_FLUSH_SECONDS), value).toThrow(ConfigError);
  });
});

describe("config.crawlers", () => {
  it("is read with the defaults", () => {
    const { crawlers, disabled } = parseConfig({ SITES: "https://e.com" });
    expect(crawlers).toEqual({
      ranges: [expect.objectContaining({ name: "googlebot" }), expect.objectContaining({ name: "bingbot" })],
      staleDays: 14,
      countFlushSeconds: 20,
    });
    expect(disabled).toEqual([]);
  });

  it("a bad value turns only the crawler log off: no ranges, the default stale days, the sitemaps served", () => {
    for (const vars of [{ CRAWLER_IP_RANGES: "googlebot" }, { CRAWLER_STALE_DAYS: "0" }, { CRAWLER_COUNT_FLUSH_SECONDS: "60" }]) {
      const config = parseConfig({ SITES: "https://e.com", ...vars });
      expect(config.crawlers).toEqual({ ranges: [], staleDays: 14, countFlushSeconds: 20 });
      expect(config.disabled).toEqual([{ feature: "crawler-log", variable: Object.keys(vars)[0], rule: expect.stringMatching(/^must /) }]);
      expect([...config.sites]).toEqual(["https://e.com"]);
    }
  });
});
