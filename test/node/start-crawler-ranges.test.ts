/**
 * `npm start -- --crawler-ranges-local` (README "Play a verified crawler locally"): the flag is
 * npm start's own (not passed to wrangler), and the server it starts serves lists the Worker's
 * parser takes, holding the loopback addresses a local request comes from.
 */
import { describe, expect, it } from "vitest";
import { serveLocalCrawlerRanges } from "../../scripts/local-crawler-ranges.ts";
import { StartArgsError, startPlan } from "../../scripts/start-plan.ts";
import { compileRanges, parseRangeFile } from "../../src/crawlers/ranges.ts";

describe("npm start --crawler-ranges-local", () => {
  it("is npm start's flag, not wrangler's", () => {
    expect(startPlan(["--crawler-ranges-local", "--port", "8881"], {})).toMatchObject({ crawlerRangesLocal: true, port: 8881 });
    expect(startPlan(["--crawler-ranges-local"], {}).wranglerArgs).not.toContain("--crawler-ranges-local");
    expect(startPlan([], {}).crawlerRangesLocal).toBe(false);
    expect(() => startPlan(["--crawler-ranges-local=1"], {})).toThrow(StartArgsError);
  });

  it("serves googlebot's and bingbot's lists on loopback, each holding 127.0.0.1 and ::1", async () => {
    const { value, fetched } = await serveLocalCrawlerRanges();
    let done = false;
    void fetched.then(() => (done = true));
    const pairs = value.split(" ").map((pair) => pair.split("=") as [string, string]);
    expect(pairs.map(([name]) => name)).toEqual(["googlebot", "bingbot"]);
    for (const [name, url] of pairs) {
      expect(new URL(url).hostname).toBe("127.0.0.1");
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const matcher = compileRanges([{ name, prefixes: parseRangeFile(await res.text()) }]);
      expect(matcher.has(name, "127.0.0.1")).toBe(true);
      expect(matcher.has(name, "::1")).toBe(true);
      expect(matcher.has(name, "66.249.64.1")).toBe(false);
      // npm start says the lists are in once both were fetched, not before.
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(done).toBe(name === "bingbot");
    }
  });
});
