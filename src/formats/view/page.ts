/**
 * The HTML shell of the browser view (docs/browser-view.md): one page layout, escaping, number
 * formatting and the streaming of rows. Every value from records reaches the page through `h()`
 * (`& < > " '` escaped, so a URL with `&`, quotes or `<` is shown and linked as written); the pages
 * carry no script at all, and the response's Content-Security-Policy forbids any.
 */
import { escapeXml } from "../../core/escape.ts";

/** Escapes text and attribute values for HTML (the XML escape covers HTML5's needs: `&apos;` is an HTML5 entity). */
export const h = escapeXml;

const numbers = new Intl.NumberFormat("en-US");

export const fmt = (n: number): string => numbers.format(n);

const STYLE = `
:root { color-scheme: light dark; --muted: #667085; --line: #d0d5dd; --accent: #1d4ed8; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 1.5rem clamp(1rem, 4vw, 3rem); }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
p { margin: .25rem 0; }
.muted, thead th { color: var(--muted); }
a { color: var(--accent); word-break: break-all; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
tbody th { font-weight: normal; }
.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.date { white-space: nowrap; }
.tag { display: inline-block; font-size: .75rem; border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; margin: 0 .25rem .15rem 0; }
nav.pages { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
form { margin: .75rem 0; display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
input[type=search] { min-width: min(30rem, 100%); font: inherit; padding: .2rem .4rem; }
meter { width: 6rem; max-width: 100%; vertical-align: middle; }
/* A phone (390 px): each row stacked, its URL the full width, the other cells on a line below it,
   numbers free to wrap; nothing wider than the screen. The markup is the desktop's, so the rows the
   view caches (view-cache.ts) are the same on both. */
@media (max-width: 40rem) {
  body { padding: 1rem; overflow-wrap: anywhere; }
  table, tbody, tr, caption { display: block; width: 100%; }
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  tr { display: flex; flex-wrap: wrap; gap: .15rem .75rem; padding: .5rem 0; border-bottom: 1px solid var(--line); }
  th, td { display: block; padding: 0; border: 0; min-width: 0; }
  tbody th, tbody td:nth-child(2) { flex: 1 1 calc(100% - 3.5rem); order: 0; }
  tbody td:first-child { flex: 0 0 2.75rem; }
  tbody td:empty { display: none; }
  .n, .date { white-space: normal; text-align: left; }
  input[type=search] { min-width: 0; width: 100%; }
}
`;

/** Everything before the page's own content. */
export function pageStart(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${h(title)}</title>
<style>${STYLE}</style>
</head>
<body>
`;
}

export const PAGE_END = "</body>\n</html>\n";

/**
 * Rows are sent in chunks of about this many characters; the first chunk (the page's head and its
 * first rows) is small, so the first rows reach the screen as soon as the store yields them.
 */
const CHUNK_CHARS = 32 * 1024;
const FIRST_CHUNK_CHARS = 4 * 1024;

/** An HTML body streamed from the pieces an async generator yields, in chunks. */
export function htmlStream(pieces: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = pieces[Symbol.asyncIterator]();
  let limit = FIRST_CHUNK_CHARS;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk = "";
      while (chunk.length < limit) {
        const next = await iterator.next();
        if (next.done) {
          if (chunk) controller.enqueue(encoder.encode(chunk));
          controller.close();
          return;
        }
        chunk += next.value;
      }
      controller.enqueue(encoder.encode(chunk));
      limit = CHUNK_CHARS;
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
