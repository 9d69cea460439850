/**
 * Deterministic demo records: realistic URLs for seeding `npm start`, tests and benchmarks.
 * Includes what breaks naive sitemap writers: `&` and quotes in queries, non-ASCII paths,
 * records without lastmod, every changefreq, priorities with two decimals.
 */
import { CHANGEFREQS } from "../core/types.ts";

export interface DemoInput {
  loc: string;
  lastmod?: string;
  changefreq?: string;
  priority?: number;
  section: string;
}

/** Small, fast, seeded PRNG (mulberry32), so the same call yields the same data everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "garden", "kitchen", "chair", "lamp", "table", "sofa", "rug", "mirror", "shelf", "desk",
  "café", "crème", "naïve", "straße", "smörgåsbord", "日本", "piñata", "über", "façade", "jalapeño",
];
const CATEGORIES = ["home", "outdoor", "office", "kids", "sale", "new-in", "rock'n'roll", "r&d"];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function slug(random: () => number, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(pick(random, WORDS));
  return parts.join("-");
}

function lastmod(random: () => number, i: number): string | undefined {
  const kind = i % 10;
  if (kind === 0) return undefined; // some records have no lastmod
  const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 700) * 86_400_000);
  const date = day.toISOString().slice(0, 10);
  if (kind < 4) return date;
  const hh = String(Math.floor(random() * 24)).padStart(2, "0");
  const mm = String(Math.floor(random() * 60)).padStart(2, "0");
  return kind < 7 ? `${date}T${hh}:${mm}:00Z` : `${date}T${hh}:${mm}:17+02:00`;
}

/** `count` records of one section, numbered from `start` (the same start gives the same records). */
export function demoSection(origin: string, section: string, count: number, start = 0): DemoInput[] {
  const out: DemoInput[] = [];
  for (let i = start; i < start + count; i++) {
    const random = prng(i * 7919 + section.length * 104_729);
    let path: string;
    switch (section) {
      case "products":
        path = `/products/${pick(random, CATEGORIES)}/${slug(random, 3)}-${i}?colour=${pick(random, ["red", "blue", "oak"])}&size=${1 + (i % 5)}`;
        break;
      case "blog":
        path = `/blog/${2024 + (i % 2)}/${slug(random, 4)}-${i}?utm_source=sitemap&ref="feed"`;
        break;
      default:
        path = `/${section}/${slug(random, 2)}/${i}`;
    }
    const record: DemoInput = { loc: origin + path, section };
    const mod = lastmod(random, i);
    if (mod) record.lastmod = mod;
    if (i % 3 !== 0) record.changefreq = CHANGEFREQS[i % CHANGEFREQS.length]!;
    if (i % 4 !== 0) record.priority = Math.round(random() * 100) / 100;
    out.push(record);
  }
  return out;
}

/** The `npm start` data set: ≥ 120,000 URLs in three sections (four shards at 50,000 per shard). */
export const DEMO_SECTIONS = [
  { section: "pages", count: 12_000 },
  { section: "products", count: 96_000 },
  { section: "blog", count: 18_000 },
] as const;

export function demoRecords(origin: string): DemoInput[] {
  return DEMO_SECTIONS.flatMap(({ section, count }) => demoSection(origin, section, count));
}
