import { describe, expect, it } from "vitest";
import { MAX_LOC_LENGTH } from "./limits.ts";
import { type LocResult, normalizeLoc, normalizeOrigin } from "./url.ts";

function okLoc(raw: string): string {
  const r = normalizeLoc(raw);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(raw)} to be valid, got ${r.rule}: ${r.message}`);
  return r.loc;
}

function rule(raw: string): string {
  const r: LocResult = normalizeLoc(raw);
  return r.ok ? "ok" : r.rule;
}

describe("normalizeLoc: normalisation", () => {
  it.each([
    ["https://example.com/", "https://example.com/"],
    ["https://example.com/page?a=1&b=2", "https://example.com/page?a=1&b=2"],
    // scheme and host lowercased, path case kept
    ["HTTPS://EXAMPLE.COM/Path/To", "https://example.com/Path/To"],
    ["HtTp://WwW.Example.Org/", "http://www.example.org/"],
    // default ports removed, other ports kept
    ["https://example.com:443/x", "https://example.com/x"],
    ["http://example.com:80/x", "http://example.com/x"],
    ["http://example.com:443/x", "http://example.com:443/x"],
    ["http://localhost:8787/x", "http://localhost:8787/x"],
    // dot segments resolved (also percent-encoded ones)
    ["https://example.com/a/./b/../c", "https://example.com/a/c"],
    ["https://example.com/a/%2e%2E/b", "https://example.com/b"],
    // percent-encoding: hex uppercased, unreserved decoded, reserved kept encoded
    ["https://example.com/a%2fb", "https://example.com/a%2Fb"],
    ["https://example.com/%7euser/%41%62c", "https://example.com/~user/Abc"],
    ["https://example.com/?q=%c3%a4", "https://example.com/?q=%C3%A4"],
    ["https://example.com/a%20b", "https://example.com/a%20b"],
    // characters RFC 3986 forbids but the WHATWG parser leaves bare
    ["https://example.com/a|b^c", "https://example.com/a%7Cb%5Ec"],
    ["https://example.com/{x}?y={z}`", "https://example.com/%7Bx%7D?y=%7Bz%7D%60"],
    ["https://example.com/[1]", "https://example.com/%5B1%5D"],
    ["https://example.com/100%", "https://example.com/100%25"],
    ["https://example.com/%zz?a=%4", "https://example.com/%25zz?a=%254"],
    ["https://example.com/x?path=c:\\dir", "https://example.com/x?path=c:%5Cdir"],
    // characters the parser encodes itself
    ['https://example.com/"<x>"', "https://example.com/%22%3Cx%3E%22"],
    // sub-delims stay (the renderer entity-escapes & and ')
    ["https://example.com/it's?a=1&b=(2)", "https://example.com/it's?a=1&b=(2)"],
    // IDN → punycode, non-ASCII path/query → UTF-8 percent-encoding, ' encoded in the query
    ["https://bücher.example/straße?q=ä&x='y'", "https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%A4&x=%27y%27"],
    ["https://例え.テスト/パス", "https://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9"],
    ["https://BÜCHER.example/", "https://xn--bcher-kva.example/"],
    ["https://example.com/😀", "https://example.com/%F0%9F%98%80"],
    // IP hosts
    ["http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"],
    ["https://[::1]/x", "https://[::1]/x"],
    // fragments are kept as given
    ["https://example.com/page#section", "https://example.com/page#section"],
  ])("%s → %s", (raw, expected) => {
    expect(okLoc(raw)).toBe(expected);
  });

  it("keeps the root URL as given: no slash added, an existing slash kept", () => {
    expect(okLoc("https://example.com")).toBe("https://example.com");
    expect(okLoc("https://example.com/")).toBe("https://example.com/");
    expect(okLoc("https://example.com?q=1")).toBe("https://example.com?q=1");
    expect(okLoc("https://example.com/?q=1")).toBe("https://example.com/?q=1");
    expect(okLoc("https://example.com#top")).toBe("https://example.com#top");
    expect(okLoc("https://EXAMPLE.com:443")).toBe("https://example.com");
    expect(okLoc("http://localhost:8787")).toBe("http://localhost:8787");
  });

  it("returns the origin", () => {
    expect(normalizeLoc("https://Example.com/a")).toEqual({ ok: true, loc: "https://example.com/a", origin: "https://example.com" });
    expect(normalizeLoc("http://localhost:8787/x")).toMatchObject({ origin: "http://localhost:8787" });
    expect(normalizeLoc("https://bücher.example/")).toMatchObject({ origin: "https://xn--bcher-kva.example" });
    expect(normalizeLoc("https://example.com:443")).toMatchObject({ origin: "https://example.com" });
  });

  it("is idempotent", () => {
    for (const raw of [
      "https://bücher.example/straße?q=ä&x='y'",
      "https://example.com/a|b^c%7e%2f?x=%zz#f[]",
      "https://example.com",
      "https://example.com?q=1",
      "HTTP://Example.COM:80/a/../b",
    ]) {
      const once = okLoc(raw);
      expect(okLoc(once)).toBe(once);
    }
  });
});

describe("normalizeLoc: rejections", () => {
  it.each([
    // not absolute
    ["", "absolute-url"],
    ["/relative/path", "absolute-url"],
    ["relative/path", "absolute-url"],
    ["//example.com/protocol-relative", "absolute-url"],
    ["example.com/page", "absolute-url"],
    ["?q=1", "absolute-url"],
    ["#frag", "absolute-url"],
    // WHATWG would "repair" these; we do not
    ["http:example.com/x", "absolute-url"],
    ["https:/example.com/x", "absolute-url"],
    ["https:///example.com/x", "absolute-url"],
    ["https://", "absolute-url"],
    ["https://?q=1", "absolute-url"],
    ["https:\\\\example.com\\x", "absolute-url"],
    ["https://example.com\\x", "absolute-url"],
    ["https://example.com/a\\b", "absolute-url"],
    // credentials
    ["https://user:pass@example.com/", "absolute-url"],
    ["https://user@example.com/", "absolute-url"],
    ["https://@example.com/", "absolute-url"],
    ["https://:pw@example.com/", "absolute-url"],
    ["https://evil.com@example.com/", "absolute-url"],
    // invalid host or port
    ["https://exa_mple%/x", "absolute-url"],
    ["https://example.com:99999/", "absolute-url"],
    ["https://example.com:port/", "absolute-url"],
    ["https://[::1/", "absolute-url"],
    ["https://a<b.example/", "absolute-url"],
    ["https://ex%00ample.com/", "absolute-url"],
    ["https://exa%20mple.com/", "absolute-url"],
    // schemes
    ["javascript:alert(1)", "scheme"],
    ["JavaScript://example.com/%0aalert(1)", "scheme"],
    ["ftp://example.com/file", "scheme"],
    ["mailto:someone@example.com", "scheme"],
    ["data:text/html,<script>alert(1)</script>", "scheme"],
    ["file:///etc/passwd", "scheme"],
    ["ws://example.com/socket", "scheme"],
    ["localhost:8080/x", "scheme"],
    // whitespace and controls the parser would strip
    [" https://example.com/", "absolute-url"],
    ["https://example.com/ ", "absolute-url"],
    ["https://example.com/a b", "absolute-url"],
    ["https://example.com/\tx", "absolute-url"],
    ["https://example.com/x\n", "absolute-url"],
    ["https://exa\r\nmple.com/", "absolute-url"],
    ["https://example.com/\u00a0", "absolute-url"],
    ["https://example.com/\u2028", "absolute-url"],
    ["https://example.com/\u3000", "absolute-url"],
    ["https://example.com/\x7f", "absolute-url"],
    ["https://example.com/\x85", "absolute-url"],
    // XML-forbidden characters in the raw input (even where the parser would encode them)
    ["https://example.com/\x00", "xml-char"],
    ["https://exa\x01mple.com/", "xml-char"],
    ["https://example.com/\x1b[31m", "xml-char"],
    ["https://example.com/\x08", "xml-char"],
    ["https://example.com/\ufffe", "xml-char"],
    ["https://example.com/\uffff", "xml-char"],
    ["https://example.com/\ud800", "xml-char"],
    ["https://example.com/?q=\udc00x", "xml-char"],
    // length
    ["https://a.b", "length"], // 11 characters
    ["http://a.bc", "length"],
  ])("%j → %s", (raw, expectedRule) => {
    expect(rule(raw)).toBe(expectedRule);
  });

  it("accepts exactly 12 characters", () => {
    expect(okLoc("https://a.bc")).toBe("https://a.bc");
  });

  it(`accepts ${MAX_LOC_LENGTH} characters and rejects ${MAX_LOC_LENGTH + 1} and more`, () => {
    const prefix = "https://example.com/";
    const max = prefix + "a".repeat(MAX_LOC_LENGTH - prefix.length);
    expect(max).toHaveLength(2047);
    expect(okLoc(max)).toBe(max);
    expect(rule(`${max}a`)).toBe("length");
    expect(rule(prefix + "a".repeat(2048))).toBe("length");
    expect(rule(prefix + "a".repeat(1_000_000))).toBe("length");
  });

  it("counts length after percent-encoding", () => {
    // 700 × "ä" is 700 raw characters but 4,200 once encoded as %C3%A4
    const raw = `https://example.com/${"ä".repeat(700)}`;
    expect(raw.length).toBeLessThan(MAX_LOC_LENGTH);
    const r = normalizeLoc(raw);
    expect(r).toMatchObject({ ok: false, rule: "length" });
    expect(r.ok ? "" : r.message).toContain("4220");
  });

  it("counts length after dot-segment removal", () => {
    const raw = `https://example.com/${"x/../".repeat(500)}page`;
    expect(raw.length).toBeGreaterThan(MAX_LOC_LENGTH);
    expect(okLoc(raw)).toBe("https://example.com/page");
  });

  it("names the limit and the problem in messages", () => {
    const long = normalizeLoc(`https://example.com/${"a".repeat(3000)}`);
    expect(long.ok ? "" : long.message).toMatch(/at most 2047 characters.*3020/);
    const short = normalizeLoc("https://a.b");
    expect(short.ok ? "" : short.message).toMatch(/at least 12 characters, got 11/);
    const ctrl = normalizeLoc("https://example.com/\x00");
    expect(ctrl.ok ? "" : ctrl.message).toContain("U+0000 at position 20");
    const surrogate = normalizeLoc("https://example.com/\ud800");
    expect(surrogate.ok ? "" : surrogate.message).toContain("lone surrogate");
    const tab = normalizeLoc("https://example.com/\tx");
    expect(tab.ok ? "" : tab.message).toContain("U+0009");
    const js = normalizeLoc("javascript:alert(1)");
    expect(js.ok ? "" : js.message).toContain('"javascript:"');
    const creds = normalizeLoc("https://user:pass@example.com/");
    expect(creds.ok ? "" : creds.message).toContain("credentials");
  });
});

describe("normalizeLoc: the fast path for plain URLs gives what the full parser gives", () => {
  // Expected values are the pre-fast-path normaliser's output (commit c85ec14) for inputs at the
  // edges of the fast path: quotes in path vs query, bare and lowercase escapes, a second "#",
  // non-ASCII, characters encodeURI handles, dot segments, and shapes it must hand to the parser.
  it.each([
    ["https://example.com/a'b?c'd#e'f", "https://example.com/a'b?c%27d#e'f"],
    ["https://example.com/100%?x=5%", "https://example.com/100%25?x=5%25"],
    ["https://example.com/a#b#c", "https://example.com/a#b#c"],
    ["https://example.com/%7e%2fx%41", "https://example.com/~%2FxA"],
    ["https://example.com/caf\u00e9/\u00fcber?q=\u00e4#\u00f6", "https://example.com/caf%C3%A9/%C3%BCber?q=%C3%A4#%C3%B6"],
    ['https://example.com/a"b<c>d`e{f}g^h|i[j]k', "https://example.com/a%22b%3Cc%3Ed%60e%7Bf%7Dg%5Eh%7Ci%5Bj%5Dk"],
    ["https://example.com/a/./b/../c", "https://example.com/a/c"],
    ["https://Example.COM/x", "https://example.com/x"],
    ["https://example.com:443/x", "https://example.com/x"],
    ["https://1.2.3.4/x", "https://1.2.3.4/x"],
    ["https://xn--caf-dma.example/x", "https://xn--caf-dma.example/x"],
    ["https://example.com/%2e%2E/x", "https://example.com/x"],
    ["https://example.com/a%zz", "https://example.com/a%25zz"],
    ["https://example.com/?a=1&b='2'", "https://example.com/?a=1&b=%272%27"],
    ["HTTPS://example.com/UPPER", "https://example.com/UPPER"],
  ])("%s → %s", (raw, expected) => {
    expect(okLoc(raw)).toBe(expected);
  });

  it.each([
    ["https://example.com/a\\b", "absolute-url"],
    ["https://user@example.com/x", "absolute-url"],
    ["https://example.1/x", "absolute-url"],
  ])("%s is rejected as %s", (raw, expected) => {
    expect(rule(raw)).toBe(expected);
  });
});

describe("normalizeOrigin", () => {
  it.each([
    ["https://example.com", "https://example.com"],
    ["https://example.com/", "https://example.com"],
    ["HTTPS://Example.COM", "https://example.com"],
    ["https://example.com:443/", "https://example.com"],
    ["https://example.com:8443", "https://example.com:8443"],
    ["http://localhost:8787", "http://localhost:8787"],
    ["http://localhost:8787/", "http://localhost:8787"],
    ["https://bücher.example", "https://xn--bcher-kva.example"],
  ])("%s → %s", (raw, expected) => {
    expect(normalizeOrigin(raw)).toBe(expected);
  });

  it.each([
    "",
    "example.com",
    "//example.com",
    "https://",
    "https://example.com/path",
    "https://example.com//",
    "https://example.com/?",
    "https://example.com?q=1",
    "https://example.com#x",
    "https://example.com/#",
    "https://user:pass@example.com",
    "https://@example.com",
    "https://example.com ",
    " https://example.com",
    "https://example.com\n",
    "https://example.com\\",
    "ftp://example.com",
    "javascript:alert(1)",
    "https:example.com",
    "https://example.com:99999",
    "https://exa\x00mple.com",
  ])("rejects %j", (raw) => {
    expect(normalizeOrigin(raw)).toBeNull();
  });

  it("agrees with normalizeLoc's origin", () => {
    const origin = normalizeOrigin("https://BÜCHER.example/");
    const loc = normalizeLoc("https://bücher.example/straße");
    expect(loc.ok && loc.origin).toBe(origin);
  });
});
