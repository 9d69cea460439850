import { describe, expect, it } from "vitest";
import { describeCharAt, findXmlForbiddenChar } from "./xml-chars.ts";

describe("findXmlForbiddenChar", () => {
  it.each([
    ["", "empty string"],
    ["https://example.com/", "plain ASCII"],
    ["a\tb\nc\rd", "tab, LF and CR are allowed"],
    [" !~", "space and the printable ASCII edges"],
    ["\x7f\x80\x9f", "DEL and C1 controls (discouraged, not forbidden)"],
    ["straße bücher 日本語", "BMP letters"],
    ["\ud7ff", "U+D7FF, last char before the surrogates"],
    ["\ue000", "U+E000, first private-use char"],
    ["\ufffd", "U+FFFD replacement character"],
    ["😀", "astral char as a surrogate pair"],
    ["\u{10000}\u{10ffff}", "first and last astral code points"],
    ["a😀b😀", "several pairs in a row"],
  ])("accepts %j (%s)", (s) => {
    expect(findXmlForbiddenChar(s)).toBe(-1);
  });

  it.each([
    ["\x00", 0],
    ["abc\x00", 3],
    ["a\x01", 1],
    ["a\x08b", 1],
    ["\x0b", 0], // vertical tab
    ["\x0c", 0], // form feed
    ["xy\x1b[0m", 2], // ANSI escape
    ["\x1f", 0],
    ["ok\ufffe", 2],
    ["\uffff", 0],
    ["\ud800", 0], // lone high surrogate at the end
    ["\ud800x", 0], // high surrogate followed by a non-surrogate
    ["ab\udc00", 2], // lone low surrogate
    ["\udfff\ud83d\ude00", 0], // low before a valid pair
    ["\ud83d\ude00\ud83d", 2], // valid pair, then a dangling high surrogate
    ["\ud83d\ud83d\ude00", 0], // two highs: the first is lone
    ["a\tb\x02\x03", 3], // first forbidden one, not the first control
  ])("finds the forbidden char in %j at %i", (s, index) => {
    expect(findXmlForbiddenChar(s)).toBe(index);
  });

  it("checks every code unit of the BMP against the XML 1.0 Char production", () => {
    const allowed = (c: number) => c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd);
    const wrong: number[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const got = findXmlForbiddenChar(`ab${String.fromCharCode(c)}`);
      if (got !== (allowed(c) ? -1 : 2)) wrong.push(c);
    }
    expect(wrong).toEqual([]);
  });

  it("finds a late forbidden char in a long string", () => {
    const s = `${"a".repeat(100_000)}\x00`;
    expect(findXmlForbiddenChar(s)).toBe(100_000);
  });
});

describe("describeCharAt", () => {
  it("labels code points without echoing them", () => {
    expect(describeCharAt("a\x01", 1)).toBe("U+0001");
    expect(describeCharAt("\ufffe", 0)).toBe("U+FFFE");
    expect(describeCharAt("x\ud800", 1)).toBe("U+D800 (lone surrogate)");
    expect(describeCharAt("😀", 0)).toBe("U+1F600");
  });
});
