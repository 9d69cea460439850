import { describe, expect, it } from "vitest";
import { SequenceDigest } from "./digest.ts";

async function digestOf(values: readonly string[]): Promise<string> {
  const d = new SequenceDigest();
  for (const v of values) await d.add(v);
  return d.value();
}

// 3,000 locs of ~40 characters: several 64 Ki-character blocks.
const locs = Array.from({ length: 3000 }, (_, i) => `https://example.com/products/item-${i}`);

describe("SequenceDigest", () => {
  it("read after any item equals the digest of that prefix alone, across block boundaries", async () => {
    const d = new SequenceDigest();
    const readings = new Map<number, string>();
    for (let i = 0; i < locs.length; i++) {
      await d.add(locs[i]!);
      if ((i + 1) % 700 === 0) readings.set(i + 1, await d.value());
    }
    expect(readings.size).toBe(4);
    for (const [n, value] of readings) expect(value, `prefix of ${n}`).toBe(await digestOf(locs.slice(0, n)));
  });

  it("tells apart sequences that differ anywhere, and where strings split", async () => {
    const all = await digestOf(locs);
    expect(all).toMatch(/^[0-9a-f]{64}$/);
    expect(await digestOf(locs.slice(1))).not.toBe(all);
    expect(await digestOf([...locs.slice(0, 1500), "https://example.com/x", ...locs.slice(1501)])).not.toBe(all);
    expect(await digestOf(["ab", "c"])).not.toBe(await digestOf(["a", "bc"]));
    expect(await digestOf([])).not.toBe(await digestOf([""]));
  });
});
