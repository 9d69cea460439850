import { describe, expect, it } from "vitest";
import { IndexBucket } from "./index-bucket.ts";
import { KvLayoutError } from "./layout.ts";

const ID_A = "00aa00aa00aa00aa";
const ID_B = "00bb00bb00bb00bb";
const ID_C = "00cc00cc00cc00cc";

describe("IndexBucket (a loc-index bucket kept as text)", () => {
  it("reads entries from the stored text without changing it", () => {
    const text = JSON.stringify({ [ID_A]: [1, "default"], [ID_B]: [7, "news", 9, "default"] });
    const bucket = new IndexBucket("i#x#00", text);
    expect(bucket.get(ID_A)).toEqual([1, "default"]);
    expect(bucket.get(ID_B)).toEqual([7, "news", 9, "default"]);
    expect(bucket.get(ID_C)).toBeUndefined();
    expect(bucket.dirty).toBe(false);
    expect(bucket.text()).toBe(text);
  });

  it("splices replaced and added entries into the text, which stays the JSON of the edited object", () => {
    const before = { [ID_A]: [1, "default"], [ID_B]: [7, "news"], [ID_C]: [3, "default"] };
    const bucket = new IndexBucket("i#x#00", JSON.stringify(before));
    bucket.set(ID_C, [3, "blog", 3, "default"]);
    bucket.set(ID_A, [1, "default"]); // unchanged: not an edit
    bucket.set("00dd00dd00dd00dd", [12, "default"]);
    bucket.set(ID_B, [8, "news"]);
    expect(bucket.get(ID_B)).toEqual([8, "news"]);
    expect(JSON.parse(bucket.text())).toEqual({
      ...before,
      [ID_B]: [8, "news"],
      [ID_C]: [3, "blog", 3, "default"],
      "00dd00dd00dd00dd": [12, "default"],
    });
  });

  it("starts an absent bucket empty and writes only what was set", () => {
    const bucket = new IndexBucket("i#x#00", null);
    expect(bucket.get(ID_A)).toBeUndefined();
    expect(bucket.text()).toBe("{}");
    bucket.set(ID_A, [1, "default"]);
    bucket.set(ID_B, [2, "default"]);
    expect(bucket.dirty).toBe(true);
    expect(JSON.parse(bucket.text())).toEqual({ [ID_A]: [1, "default"], [ID_B]: [2, "default"] });
  });

  it("names the KV key when the stored text is not a loc-index bucket", () => {
    expect(() => new IndexBucket("i#x#0f", "[1,2]")).toThrow(KvLayoutError);
    expect(() => new IndexBucket("i#x#0f", "[1,2]")).toThrow('KV layout error in "i#x#0f": loc-index bucket is not a JSON object');
    const broken = new IndexBucket("i#x#0f", `{"${ID_A}":[1,"default"}`);
    expect(() => broken.get(ID_A)).toThrow(`KV layout error in "i#x#0f": loc-index entry "${ID_A}" has no closing "]"`);
    const garbled = new IndexBucket("i#x#0f", `{"${ID_A}":[1,default]}`);
    expect(() => garbled.get(ID_A)).toThrow(`loc-index entry "${ID_A}" is not JSON`);
  });
});
