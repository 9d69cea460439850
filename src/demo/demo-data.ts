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
  /** Protocol extensions (raw input form; see withDemoExtensions). */
  images?: unknown[];
  videos?: unknown[];
  news?: unknown;
  alternates?: unknown[];
}

/** Small, fast, seeded PRNG (mulberry32), so the same call yields the same data everywhere. */
function prng(seed: number): () => number {
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
  "garden",
  "kitchen",
  "chair",
  "lamp",
  "table",
  "sofa",
  "rug",
  "mirror",
  "shelf",
  "desk",
  "café",
  "crème",
  "naïve",
  "straße",
  "smörgåsbord",
  "日本",
  "piñata",
  "über",
  "façade",
  "jalapeño",
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
const DEMO_SECTIONS = [
  { section: "pages", count: 12_000 },
  { section: "products", count: 96_000 },
  { section: "blog", count: 18_000 },
] as const;

/** A complete video entry (every optional field set), for demo product pages and benchmarks. */
export function demoVideo(i: number): Record<string, unknown> {
  return {
    thumbnail_loc: `https://cdn.example.com/videos/${i}/thumb.jpg`,
    title: `How to assemble item ${i}`,
    description: `A two-minute guide to item ${i}: unpack, assemble & enjoy. <No tools> needed.`,
    content_loc: `https://cdn.example.com/videos/${i}/video.mp4`,
    player_loc: `https://player.example.com/embed/${i}?autoplay=0&lang=en`,
    duration: 120 + (i % 60),
    expiration_date: "2030-12-31",
    rating: 4.5,
    view_count: 1000 + i,
    publication_date: "2025-06-01T12:00:00+02:00",
    tags: ["assembly", "how-to"],
    family_friendly: true,
    restriction: { relationship: "allow", countries: ["DE", "FR", "GB", "US"] },
    requires_subscription: false,
    uploader: { name: "Demo Furniture", info: "https://cdn.example.com/about" },
    platform: { relationship: "allow", platforms: ["web", "mobile", "tv"] },
    live: false,
  };
}

/**
 * Adds protocol extensions to a section's records (numbered from 0, as demoSection(…, 0) returns
 * them), in place, without changing their count: hreflang clusters of three pages (en, de, fr and
 * x-default), product images (one product in 50) and a video with every supported field (one in
 * 500), and news data on the 40 newest blog posts, published over the ~33 hours before `now`.
 */
export function withDemoExtensions(section: string, records: DemoInput[], now: number): DemoInput[] {
  records.forEach((record, i) => {
    if (section === "pages" && i % 40 < 3) {
      const base = i - (i % 40);
      const cluster = [records[base], records[base + 1], records[base + 2]];
      if (cluster.every((r) => r !== undefined)) {
        const [en, de, fr] = cluster as [DemoInput, DemoInput, DemoInput];
        record.alternates = [
          { hreflang: "en", href: en.loc },
          { hreflang: "de", href: de.loc },
          { hreflang: "fr", href: fr.loc },
          { hreflang: "x-default", href: en.loc },
        ];
      }
    }
    if (section === "products" && i % 50 === 1) {
      record.images = [
        `https://cdn.example.com/products/${i}/front.jpg`,
        { loc: `https://cdn.example.com/products/${i}/side.jpg`, caption: `Side view of "item ${i}" & its box`, title: `Item ${i}` },
        ...(i % 100 === 1 ? [{ loc: `https://cdn.example.com/products/${i}/detail.png` }] : []),
      ];
    }
    if (section === "products" && i % 500 === 251) {
      record.videos = [demoVideo(i)];
    }
    if (section === "blog" && i < 40) {
      record.news = {
        publication: { name: "The Demo Times", language: "en" },
        publication_date: new Date(now - i * 50 * 60_000).toISOString(),
        title: i % 7 === 0 ? `Breaking: "R&D" <news> no. ${i}` : `Demo article no. ${i}`,
      };
    }
  });
  return records;
}

/** The npm start data set, with every protocol extension on some records (see withDemoExtensions). */
export function demoRecords(origin: string, now = Date.now()): DemoInput[] {
  return DEMO_SECTIONS.flatMap(({ section, count }) => withDemoExtensions(section, demoSection(origin, section, count), now));
}
