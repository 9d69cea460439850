/**
 * Peak memory of storing one worst-case shard as a snapshot: 50 MiB of XML made of high-entropy
 * URLs (barely compressible: ~38 MB gzip) rendered, gzipped and staged into parts by the KV
 * snapshot store (src/adapters/kv/snapshot-store.ts), as the regeneration does. KV is a stand-in
 * that keeps only each part's size; records are generated lazily, so what grows is what the
 * render → gzip → parts path holds.
 *
 * `node --expose-gc bench/snapshot-memory.ts [--part-bytes N]`: prints XML and gzip bytes, parts,
 * and the peak growth of RSS and of heap + external memory (sampled on every part write and every
 * 2 ms; Node's default GC, so garbage not yet collected counts too). `--part-bytes 1073741824` is
 * the control: the whole gzip held in memory, as before parts.
 */
import { KvSnapshotStore } from "../src/adapters/kv/snapshot-store.ts";
import { renderUrlset } from "../src/core/render.ts";
import type { UrlRecord } from "../src/core/types.ts";
import { stageDocument } from "../src/snapshots/stage-document.ts";

const XML_TARGET = 50 * 1024 * 1024 - 4096;
const LOC_LENGTH = 2000;

const gc = globalThis.gc;
if (!gc) throw new Error("run with node --expose-gc");

async function* records(): AsyncGenerator<UrlRecord> {
  const perUrl = LOC_LENGTH + "<url><loc></loc></url>\n".length;
  const count = Math.floor(XML_TARGET / perUrl);
  for (let i = 0; i < count; i++) {
    // base64url of random bytes: 6 bits of entropy per character, as signed or tokenised URLs.
    const token = Buffer.from(crypto.getRandomValues(new Uint8Array((LOC_LENGTH * 3) / 4))).toString("base64url");
    yield { loc: `https://example.com/t/${i.toString().padStart(8, "0")}?s=${token}`.slice(0, LOC_LENGTH) };
  }
}

const partSizes: number[] = [];
const kv = {
  put: async (_key: string, value: Uint8Array) => {
    partSizes.push(value.byteLength);
    sample();
  },
} as unknown as KVNamespace;

gc();
const base = process.memoryUsage();
let peakRss = 0;
let peakHeap = 0;
function sample(): void {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss - base.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed + m.external - base.heapUsed - base.external);
}
const timer = setInterval(sample, 2);
const flag = process.argv.indexOf("--part-bytes");
const store = new KvSnapshotStore(kv, flag > 0 ? { partBytes: Number(process.argv[flag + 1]) } : {});
const { staged, xmlBytes } = await stageDocument(store, renderUrlset(records()), async () => undefined);
const document = { kind: "shard", origin: "https://example.com", section: "t", n: 1, version: "v" } as const;
await store.commit(document, staged, { version: "v", xmlBytes, gzBytes: staged.gzBytes, storedAt: 0 }, async () => undefined);
clearInterval(timer);
sample();
const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
console.log(
  JSON.stringify({
    xml: mb(xmlBytes),
    gzip: mb(staged.gzBytes),
    parts: partSizes.length,
    largestPart: mb(Math.max(...partSizes)),
    peakRssGrowth: mb(peakRss),
    peakHeapAndExternalGrowth: mb(peakHeap),
  }),
);
