/**
 * Profiling helper for the renderer cases (not part of `npm run bench`):
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.ts ours 20
 *   node bench/profile.ts --summary /tmp/prof/CPU.*.cpuprofile
 *
 * The first form runs one case (ours | plain | floor) N times on 50,000 records; the second prints
 * the functions with the most self time from a `.cpuprofile`.
 */
import { readFileSync } from "node:fs";
import { renderUrlset } from "../src/core/render.ts";
import { gzipDocument as gzip } from "../src/documents/gzip.ts";
import { benchRecords, drain, median, timed } from "./lib.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function summary(file: string, top = 25): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(`total ${(total / 1000).toFixed(0)} ms sampled`);
  for (const [key, us] of rows) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
}

const [mode, arg] = process.argv.slice(2);
if (mode === "--summary") {
  summary(arg!);
} else {
  const runs = Number(arg ?? 20);
  const records = benchRecords(50_000);
  const chunks: Uint8Array[] = [];
  for await (const c of renderUrlset(records) as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
  const floorStream = (): ReadableStream<Uint8Array> => {
    let i = 0;
    return new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (i < chunks.length) controller.enqueue(chunks[i++]!);
          else controller.close();
        },
      },
      { highWaterMark: 1 },
    );
  };
  const run = (): Promise<number> =>
    mode === "plain" ? drain(renderUrlset(records)) : mode === "floor" ? drain(gzip(floorStream())) : drain(gzip(renderUrlset(records)));
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await timed(run)).ms);
  console.log(`${mode ?? "ours"}: median ${median(times).toFixed(1)} ms over ${runs} runs (${times.map((t) => t.toFixed(0)).join(", ")})`);
}
