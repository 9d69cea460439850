/** Bounded body reading (src/admin/body.ts): formats, chunk boundaries, limits, error lines. */
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { BodyError, bodyFormat, readBatch } from "../../src/admin/body.ts";
import { MAX_RECORD_DEPTH, MAX_RECORD_VALUES } from "../../src/admin/record-shape.ts";

const LIMITS = { maxRecords: 100, maxBytes: 64 * 1024 };
const encoder = new TextEncoder();

/** A request whose body arrives in `size`-byte chunks (1 = byte by byte), with no Content-Length. */
function chunked(type: string, text: string | Uint8Array, size: number): Request {
  const bytes = typeof text === "string" ? encoder.encode(text) : text;
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
  return new Request("http://x/", { method: "PUT", headers: { "Content-Type": type }, body });
}

/** Every record of a body, and the line each starts on. */
async function collect(request: Request, limits: { maxRecords: number; maxBytes: number }): Promise<{ items: unknown[]; lines: number[] }> {
  const items: unknown[] = [];
  const lines: number[] = [];
  await readBatch(request, limits, (item, line) => {
    items.push(item);
    lines.push(line);
  });
  return { items, lines };
}

async function failure(promise: Promise<unknown>): Promise<BodyError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof BodyError) return err;
    throw err;
  }
  throw new Error("expected a BodyError");
}

describe("bodyFormat", () => {
  it("maps media types and rejects other charsets", () => {
    expect(bodyFormat("application/json")).toBe("json");
    expect(bodyFormat("application/json;charset=utf-8")).toBe("json");
    expect(bodyFormat("application/x-ndjson")).toBe("ndjson");
    expect(bodyFormat("application/jsonl; charset=UTF8")).toBe("ndjson");
    for (const bad of ["text/csv", "", null, "application/json; charset=utf-16", "application/jsonx"]) {
      expect(() => bodyFormat(bad)).toThrow(BodyError);
    }
  });
});

describe("readBatch", () => {
  // Strings with every structural character, escapes, nesting and non-ASCII text, over several lines.
  const tricky = [
    { loc: "http://a.example/1", note: 'brackets ] } [ { and "quotes" and \\ backslash \\", comma,' },
    { loc: "http://a.example/2", nested: { a: [1, [2, { b: "]" }]], c: "\\\\" } },
    "a plain string",
    42,
    null,
    { loc: "http://a.example/ünïcødé/€/😀" },
  ];
  const jsonText = `[\n${tricky.map((t) => `  ${JSON.stringify(t)}`).join(",\n")}\n]\n`;

  it("splits a JSON array exactly as JSON.parse reads it, at any chunk size, with each element's line", async () => {
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      const parsed = await collect(chunked("application/json", jsonText, size), LIMITS);
      expect(parsed.items).toEqual(JSON.parse(jsonText));
      expect(parsed.lines).toEqual([2, 3, 4, 5, 6, 7]);
    }
    const compact = await collect(chunked("application/json", JSON.stringify(tricky), 5), LIMITS);
    expect(compact.items).toEqual(tricky);
    expect(compact.lines).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it("reads NDJSON line by line at any chunk size (LF, CRLF, blank lines, multi-byte characters split)", async () => {
    const text = `${tricky.map((t) => JSON.stringify(t)).join("\r\n\n")}\n\n`;
    for (const size of [1, 2, 5, 1 << 16]) {
      const parsed = await collect(chunked("application/x-ndjson", text, size), LIMITS);
      expect(parsed.items).toEqual(tricky);
      expect(parsed.lines).toEqual([1, 3, 5, 7, 9, 11]);
    }
    // No final newline: the last line still counts.
    expect((await collect(chunked("application/x-ndjson", '"a"\n"b"', 3), LIMITS)).items).toEqual(["a", "b"]);
  });

  it("names the line of a syntax error inside a multi-line element", async () => {
    const text = '[\n  {"loc": "http://a.example/1"},\n  {\n    "loc": "http://a.example/2",\n    "lastmod": 2024-01-01\n  }\n]';
    const err = await failure(collect(chunked("application/json", text, 4), LIMITS));
    expect(err.status).toBe(400);
    expect(err.body).toMatchObject({ error: "invalid_body", line: 5 });
    expect(err.body.message).toMatch(/^line 5: record 1 is not valid JSON/);
  });

  it("rejects unterminated strings and structures", async () => {
    for (const [text, line] of [
      ['[\n"abc', 2],
      ['[{"a": [1, 2}', 1],
      ["[1, 2", 1],
      ["[1 2]", 1],
    ] as const) {
      const err = await failure(collect(chunked("application/json", text, 3), LIMITS));
      expect(err.status, text).toBe(400);
      expect(err.body.line, text).toBe(line);
    }
  });

  it("parses one NDJSON line of 4 MB in linear time: each character is searched for a line feed once", async () => {
    const pad = "a".repeat(4 * 1024 * 1024);
    const text = `${JSON.stringify({ loc: "http://a.example/long", pad })}\n{"loc":"http://a.example/next"}`;
    // Counts the characters every search for a line feed goes over (String.prototype.indexOf).
    const indexOf = String.prototype.indexOf;
    let scanned = 0;
    String.prototype.indexOf = function (this: string, search: string, from?: number): number {
      if (search === "\n") scanned += this.length - (from ?? 0);
      return indexOf.call(this, search, from);
    };
    let parsed: Awaited<ReturnType<typeof collect>>;
    try {
      parsed = await collect(chunked("application/x-ndjson", text, 16 * 1024), { maxRecords: 10, maxBytes: 8 * 1024 * 1024 });
    } finally {
      String.prototype.indexOf = indexOf;
    }
    expect(parsed.items).toHaveLength(2);
    expect((parsed.items[0] as { pad: string }).pad).toBe(pad);
    expect(parsed.lines).toEqual([1, 2]);
    // A rescan of the pending text per chunk would go over ~256 × 4 MB / 2.
    expect(scanned).toBeLessThanOrEqual(2 * text.length);
  });

  it("stops at the record limit while streaming NDJSON, and at the byte limit", async () => {
    const lines = Array.from({ length: 101 }, (_, i) => JSON.stringify({ loc: `http://a.example/${i}` })).join("\n");
    const records = await failure(collect(chunked("application/x-ndjson", lines, 256), LIMITS));
    expect(records.status).toBe(413);
    expect(records.body.limits).toEqual(LIMITS);

    const big = `[${'"x",'.repeat(20_000)}"x"]`;
    const bytes = await failure(collect(chunked("application/json", big, 4096), LIMITS));
    expect(bytes.status).toBe(413);
    const declared = new Request("http://x/", {
      method: "PUT",
      headers: { "Content-Type": "application/json", "Content-Length": String(big.length) },
      body: big,
    });
    expect((await failure(collect(declared, LIMITS))).status).toBe(413);
  });

  it("names the line of invalid UTF-8 in JSON and NDJSON", async () => {
    const bytes = new Uint8Array([...encoder.encode('[\n"a",\n"b'), 0xc3, 0x28, ...encoder.encode('"\n]')]);
    const json = await failure(collect(chunked("application/json", bytes, 1 << 16), LIMITS));
    expect(json.body).toMatchObject({ error: "invalid_body", line: 3 });
    const nd = new Uint8Array([...encoder.encode('"a"\n"b"\n"'), 0xff, ...encoder.encode('"\n')]);
    for (const size of [1, 4, 1 << 16]) {
      const err = await failure(collect(chunked("application/x-ndjson", nd, size), LIMITS));
      expect(err.body, String(size)).toMatchObject({ error: "invalid_body", line: 3 });
    }
  });

  it("is thrown as an HTTPException that renders the one JSON error shape, never cached", async () => {
    const err = await failure(collect(chunked("application/x-ndjson", '{"loc": "a"}\n{', 4), LIMITS));
    expect(err).toBeInstanceOf(HTTPException);
    const response = err.getResponse();
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual(err.body);
    expect(err.body).toMatchObject({ error: "invalid_body", line: 2 });
  });

  it("refuses a record nested too deep or with too many values before parsing it, in both formats, with its line", async () => {
    const deep = `{"loc":"http://a.example/d","x":${"[".repeat(MAX_RECORD_DEPTH)}${"]".repeat(MAX_RECORD_DEPTH)}}`;
    const wide = `{"loc":"http://a.example/w","x":[${"{},".repeat(MAX_RECORD_VALUES)}{}]}`;
    const fine = `{"loc":"http://a.example/ok","x":[${"[".repeat(MAX_RECORD_DEPTH - 2)}${"]".repeat(MAX_RECORD_DEPTH - 2)},${"0,".repeat(MAX_RECORD_VALUES - 100)}0]}`;
    const limits = { maxRecords: 10, maxBytes: 1024 * 1024 };
    // The largest record within the bounds is read (structure inside strings does not count).
    const text = `${fine}\n${JSON.stringify({ loc: "http://a.example/s", s: "[[[[{{{{,,,,".repeat(10_000) })}`;
    for (const size of [7, 1 << 16]) expect((await collect(chunked("application/x-ndjson", text, size), limits)).items).toHaveLength(2);
    expect((await collect(chunked("application/json", `[${fine}]`, 5), limits)).items).toHaveLength(1);

    for (const [bad, why] of [
      [deep, /^line 2: record 1 nests deeper than 16 levels/],
      [wide, /^line 2: record 1 has more than 50,000 JSON values/],
    ] as const) {
      for (const size of [3, 1 << 16]) {
        const json = await failure(collect(chunked("application/json", `[{"loc":"http://a.example/1"},\n${bad}]`, size), limits));
        expect(json.status).toBe(400);
        expect(json.body.message).toMatch(why);
        const nd = await failure(collect(chunked("application/x-ndjson", `{"loc":"http://a.example/1"}\n${bad}`, size), limits));
        expect(nd.body).toMatchObject({ error: "invalid_body", line: 2 });
        expect(nd.body.message).toMatch(/^line 2: record (nests deeper|has more than)/);
      }
    }
  });

  it("hands each record over as soon as it is complete, before the rest of the body arrives", async () => {
    const seen: unknown[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode('[{"loc":"http://a.example/1"},{"loc":"http://a.'));
        await gate;
        controller.enqueue(encoder.encode('example/2"}]'));
        controller.close();
      },
    });
    const request = new Request("http://x/", { method: "PUT", headers: { "Content-Type": "application/json" }, body });
    const done = readBatch(request, LIMITS, (item) => {
      seen.push(item);
      if (seen.length === 1) release();
    });
    await done;
    expect(seen).toEqual([{ loc: "http://a.example/1" }, { loc: "http://a.example/2" }]);
  });
});
