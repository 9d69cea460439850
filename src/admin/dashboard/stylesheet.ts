/**
 * The admin pages' stylesheet, served from its own route so the CSP can forbid inline styles
 * (`style-src 'self'`). Readable on a phone (test/node/dashboard-phone.test.ts, 390 px): one
 * column; a table wider than the screen scrolls inside its own box (`.scroll`, with shadows at an
 * edge that has more to show: no script needed), never the page; each summary figure is a block
 * of its value over its label, set apart from the next.
 */
const CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #5b6570; --line: #d5dae0; --bar: #2f6fde; --bad: #b91c1c; --warn: #a16207; --ok: #15803d; --bg: #fff; --card: #f6f8fa; --shade: rgb(0 0 0 / 0.18); --surface: var(--bg); }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #9aa4ae; --line: #39414a; --bar: #5b9bff; --bad: #f87171; --warn: #facc15; --ok: #4ade80; --bg: #111418; --card: #1a1f25; --shade: rgb(0 0 0 / 0.6); } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header, main { max-width: 70rem; margin: 0 auto; padding: 0.75rem 1rem; }
header { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; justify-content: space-between; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.25rem; margin: 0; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.75rem 0 0.5rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 0 0 0.25rem; }
.narrow { max-width: 24rem; margin-top: 10vh; }
form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
label { width: 100%; }
input { flex: 1 1 12rem; font: inherit; padding: 0.4rem; }
button { font: inherit; padding: 0.4rem 0.9rem; cursor: pointer; }
.card { --surface: var(--card); background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem; margin: 0.75rem 0; min-width: 0; }
.figures { display: flex; flex-wrap: wrap; gap: 0.75rem 1.25rem; margin: 0.5rem 0 0.75rem; }
.figure { display: flex; flex-direction: column; min-width: 4.5rem; padding-left: 0.5rem; border-left: 3px solid var(--line); }
.figure .value { font-size: 1.35rem; font-weight: 600; line-height: 1.2; font-variant-numeric: tabular-nums; white-space: nowrap; }
.figure .label { white-space: nowrap; }
.figure .label, .note, figcaption { color: var(--muted); font-size: 0.85rem; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5rem 0;
  background: linear-gradient(to right, var(--surface) 30%, transparent) left / 2.5rem 100% no-repeat local,
    linear-gradient(to left, var(--surface) 30%, transparent) right / 2.5rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, var(--shade), transparent) left / 0.75rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, var(--shade), transparent) right / 0.75rem 100% no-repeat scroll; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: middle; white-space: nowrap; }
td.url { white-space: normal; overflow-wrap: anywhere; min-width: 12rem; }
.num { font-variant-numeric: tabular-nums; }
.bad { color: var(--bad); }
.warn { color: var(--warn); }
svg.bar { width: 8rem; max-width: 30vw; height: 0.6rem; vertical-align: middle; }
.bar-bg { fill: var(--line); }
.bar-fill { fill: var(--bar); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
figure { margin: 0; }
svg.columns { width: 100%; height: 6rem; border-bottom: 1px solid var(--line); }
.col { fill: var(--bar); }
.col.bad { fill: var(--bad); }
.ok { color: var(--ok); }
.health h2 { margin-top: 0.75rem; }
.health-list { list-style: none; margin: 0.5rem 0; padding: 0; }
.health-list li { border-left: 4px solid var(--warn); background: var(--card); padding: 0.4rem 0.6rem; margin: 0 0 0.4rem; overflow-wrap: anywhere; }
.health-list li.red { border-left-color: var(--bad); }
.health-list .level { font-weight: 600; font-size: 0.8rem; text-transform: uppercase; color: var(--warn); }
.health-list li.red .level { color: var(--bad); }
.health-list .action { display: block; color: var(--muted); font-size: 0.9rem; }
.sections { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 20rem), 1fr)); grid-auto-flow: row dense; gap: 0 0.75rem; }
.sections .card { margin: 0.375rem 0; }
.sections .card.opened { grid-column: 1 / -1; }
.card p.note { margin: 0.25rem 0; overflow-wrap: anywhere; }
details { margin: 0.25rem 0; min-width: 0; }
summary { cursor: pointer; color: var(--muted); font-size: 0.9rem; }
details[open] > summary { margin-bottom: 0.25rem; }
.pager { display: flex; flex-wrap: wrap; gap: 0.25rem 0.6rem; align-items: baseline; margin: 0.25rem 0 0.5rem; }
.pager a, .pager span { font-variant-numeric: tabular-nums; }
.pager [aria-current] { font-weight: 600; }
table.shards td { padding-top: 0.1rem; padding-bottom: 0.1rem; }
td.wrap { white-space: normal; min-width: 12rem; }
`;

export const stylesheet = (): Response =>
  new Response(CSS, {
    headers: { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" },
  });
