import { SaxesParser } from "saxes";
function run(xml, size = 1000) {
  const p = new SaxesParser({ xmlns: true, position: true });
  const out = [];
  p.on("error", (e) => out.push(["ERR", p.line, p.position, e.message]));
  p.on("opentag", (t) => out.push(["open", p.line, p.position, t.name]));
  p.on("closetag", (t) => out.push(["close", p.line, p.position, t.name]));
  p.on("text", (t) => out.push(["text", p.line, p.position, t]));
  p.on("comment", (t) => out.push(["comment", p.line, p.position, t]));
  try { for (let i = 0; i < xml.length; i += size) p.write(xml.slice(i, i + size)); p.close(); } catch (e) { out.push(["THROW", e.message]); }
  console.log(JSON.stringify(xml).slice(0, 80)); for (const o of out) console.log("  ", JSON.stringify(o));
}
run(`<urlset><url><loc>?a=1&b=2</loc></url>\n</urlset>`);
run(`<urlset><url><loc>?a=1&b</loc></url>\n</urlset>`);
run(`<urlset><url><loc>?a=1& b</loc></url>\n</urlset>`);
run(`<urlset><url a="x&y=1"><loc>a</loc></url>\n</urlset>`);
run(`<urlset><!-- & --><url>&amp;&nbsp;</url>\n</urlset>`, 3);
