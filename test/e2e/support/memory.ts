/**
 * Resident memory of the Worker's runtime: the workerd processes of a `wrangler dev` process group,
 * read from /proc (Linux). Sampled while a request runs, so a hostile body's cost shows as the peak
 * above the level before it.
 */
import { readFileSync, readdirSync } from "node:fs";

function workerdPids(group: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const [, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (comm === "workerd" && Number(pgrp) === group) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function rssOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

export interface MemoryReading<T> {
  result: T;
  /** Bytes resident before the work started. */
  before: number;
  /** The highest resident bytes seen while it ran (sampled every 20 ms). */
  peak: number;
}

/** Runs `work` while sampling the workerd processes of `group`. */
export async function peakRss<T>(group: number, work: () => Promise<T>): Promise<MemoryReading<T>> {
  const pids = workerdPids(group);
  if (pids.length === 0) throw new Error(`no workerd process in group ${group}`);
  const before = rssOf(pids);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pids));
  }, 20);
  try {
    const result = await work();
    peak = Math.max(peak, rssOf(pids));
    return { result, before, peak };
  } finally {
    clearInterval(timer);
  }
}
