/**
 * break51, issue 51 (Why 7, Deliver 2): "concurrent requests write the stored robots.txt copy on one
 * KV key within a second (KV allows one write a second per key)". The fix (365ea6e) put the last good
 * copy behind one writer per site; its sibling on the same namespace, the loop record
 * (src/http/robots/loop-record.ts, key `robots-loop/1/{origin}`), is still read-then-write per
 * request: `recordLoop` reads the record and, finding none, writes it; `clearLoop` reads it and
 * deletes it. Two robots.txt requests at once, uncached, each see the same read and each write (or
 * delete) the one key within the same second: production answers the second 429, and the enforcing
 * meter refuses it (`robots.txt: recording the robots.txt loop of … failed: CallLimitError: KV PUT
 * failed: 429 …`). Through the Worker's entry, real KV; only the origin server is faked (it loops
 * back into the Worker, as in robots.test.ts).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { fakeOrigin, text, uncached } from "./robots-support.ts";
import { call, freshOrigin } from "./support.ts";

afterEach(() => vi.restoreAllMocks());

const robots = (e: Env, origin: string) => call(e, `${origin}/robots.txt`);

/** The loop record's writes that failed, as `later` (src/http/robots/respond.ts) logs them. */
function failedWrites(): string[] {
  const warnings: string[] = [];
  vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(" ")));
  return warnings;
}

/** A site whose robots.txt fetch loops back into this Worker, uncached: each request fetches. */
function loopingSite(): { origin: string; e: Env } {
  const origin = freshOrigin("b51-robots-loop");
  const e = uncached(origin);
  fakeOrigin((url, init) => call(e, url, init));
  return { origin, e };
}

describe("the robots.txt loop record: one write a second on its key", () => {
  it("control: two looping requests one after the other write the record once, nothing refused", async () => {
    const warnings = failedWrites();
    const { origin, e } = loopingSite();
    expect((await robots(e, origin)).status).toBe(503);
    expect((await robots(e, origin)).status).toBe(503);
    expect(warnings.filter((w) => w.includes("loop"))).toEqual([]);
  });

  it("two looping requests at once: neither write of the record is refused", async () => {
    // Observed on main: both read no record and both write it; the second write is refused as 429.
    const warnings = failedWrites();
    const { origin, e } = loopingSite();
    const answers = await Promise.all([robots(e, origin), robots(e, origin)]);
    expect(answers.map((r) => r.status)).toEqual([503, 503]);
    expect(warnings.filter((w) => w.includes("loop"))).toEqual([]);
  });

  it("two good answers at once after a loop: neither delete of the record is refused", async () => {
    // Observed on main: both read the record, both wait out its second, both delete it: the second is 429.
    const warnings = failedWrites();
    const { origin, e } = loopingSite();
    expect((await robots(e, origin)).status).toBe(503);
    vi.mocked(globalThis.fetch).mockImplementation(async () => text("User-agent: *\nDisallow: /x/\n"));
    const answers = await Promise.all([robots(e, origin), robots(e, origin)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(warnings.filter((w) => w.includes("loop"))).toEqual([]);
  });
});
