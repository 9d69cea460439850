import { describe, expect, it } from "vitest";
import { renderUrlset } from "./render.ts";
import { SourceReader, eachItem, paged } from "./source.ts";
import type { UrlRecord } from "./types.ts";

async function* pagesOf<T>(pages: T[][], log?: string[]): AsyncGenerator<readonly T[]> {
  try {
    for (const page of pages) yield page;
  } finally {
    log?.push("returned");
  }
}

async function drain<T>(reader: SourceReader<T>): Promise<{ items: T[]; awaited: number }> {
  const items: T[] = [];
  let awaited = 0;
  for (;;) {
    const read = reader.next();
    if (read instanceof Promise) awaited++;
    const next = read instanceof Promise ? await read : read;
    if (next.done) return { items, awaited };
    items.push(next.value);
  }
}

describe("SourceReader", () => {
  it("reads a page's items without a promise: one await per page, empty pages skipped", async () => {
    const { items, awaited } = await drain(new SourceReader(paged(pagesOf([[1, 2, 3], [], [4], [5, 6]]))));
    expect(items).toEqual([1, 2, 3, 4, 5, 6]);
    // The first item of each non-empty page, and the end.
    expect(awaited).toBe(4);
  });

  it("reads a sync source without any promise and an async one item by item", async () => {
    expect(await drain(new SourceReader([1, 2, 3]))).toEqual({ items: [1, 2, 3], awaited: 0 });
    async function* items() {
      yield* [1, 2, 3];
    }
    expect(await drain(new SourceReader(items()))).toEqual({ items: [1, 2, 3], awaited: 4 });
  });

  it("return() stops the pages early", async () => {
    const log: string[] = [];
    const reader = new SourceReader(paged(pagesOf([[1, 2], [3]], log)));
    await reader.next();
    await reader.return();
    expect(log).toEqual(["returned"]);
  });

  it("eachItem hands over the items one at a time and stops the pages when the consumer does", async () => {
    const log: string[] = [];
    const seen: number[] = [];
    for await (const n of eachItem(
      paged(
        pagesOf(
          [
            [1, 2],
            [3, 4],
          ],
          log,
        ),
      ),
    )) {
      seen.push(n);
      if (n === 3) break;
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(log).toEqual(["returned"]);
  });
});

describe("renderUrlset of a paged source", () => {
  it("writes the same bytes as of the same records in an array", async () => {
    const records: UrlRecord[] = Array.from({ length: 5_000 }, (_, i) => ({ loc: `https://example.com/p/${i}?a&b`, lastmod: "2026-01-01" }));
    const pages: UrlRecord[][] = [];
    for (let i = 0; i < records.length; i += 777) pages.push(records.slice(i, i + 777));
    const fromPages = await new Response(renderUrlset(paged(pagesOf(pages)))).text();
    const fromArray = await new Response(renderUrlset(records)).text();
    expect(fromPages).toBe(fromArray);
    expect(fromPages.match(/<url>/g)?.length).toBe(5_000);
  });
});
