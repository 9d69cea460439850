/**
 * Workers KV as Cloudflare documents it, around the real local binding: a write is not seen at once
 * everywhere. After each put or delete, reads of that key (get, getWithMetadata, bulk gets, list)
 * return the previous value, or "not found", until 60 s have passed on a clock the test controls.
 * Local KV is strongly consistent, so without this no test can see a writer that reads back what it
 * just wrote. The wrapper also holds chosen writes in the air until the test releases them (a put
 * that stalls past any lease) and fails chosen writes (a KV error), and it logs every write as it
 * lands. Everything else is the real binding.
 */

/** Cloudflare: "changes may take up to 60 seconds or more to be visible in other global network locations". */
export const PROPAGATION_MS = 60_000;

interface Shadow {
  /** What readers still see: the value before the write (its bytes), or null (not found). */
  value: ArrayBuffer | null;
  metadata: unknown;
  until: number;
}

interface Held {
  name: string;
  release: () => void;
}

export interface EventualKv {
  kv: KVNamespace;
  /** The test's clock (ms); `advance` moves it. */
  now(): number;
  advance(ms: number): void;
  /** Holds writes of matching keys until `release` (each held write is in the air meanwhile). */
  hold(match: (name: string) => boolean): void;
  /** Lets every held write go, in the order they were made, and stops holding. */
  release(): Promise<void>;
  /** Writes currently held. */
  held(): string[];
  /** Fails the next `times` writes of matching keys. */
  fail(match: (name: string) => boolean, times: number): void;
  /** Every write as it landed: key, and the value (null for a delete). */
  landed: { name: string; value: string | null }[];
  /** Most writes of one key ever in the air at once. */
  maxConcurrentPerKey(): number;
}

/** A written value as the log keeps it: text as is, bytes and streams (snapshots) only named. */
const textOf = (value: unknown): string | null => (value === null || value === undefined ? null : typeof value === "string" ? value : "(bytes)");

/** The type a read asks for: "text" (default), "json", "arrayBuffer" or "stream". */
const typeOf = (type: unknown): string =>
  (typeof type === "object" && type !== null ? (type as { type?: string }).type : (type as string | undefined)) ?? "text";

export function eventualKv(real: KVNamespace, start = Date.now()): EventualKv {
  let clock = start;
  const shadows = new Map<string, Shadow>();
  let holding: ((name: string) => boolean) | null = null;
  let heldWrites: Held[] = [];
  const failing: { match: (name: string) => boolean; times: number }[] = [];
  const inAir = new Map<string, number>();
  let maxInAir = 0;
  const landed: { name: string; value: string | null }[] = [];

  const visible = (name: string): Shadow | undefined => {
    const shadow = shadows.get(name);
    if (shadow && shadow.until > clock) return shadow;
    if (shadow) shadows.delete(name);
    return undefined;
  };

  /** A shadowed value in the form a read asks for. */
  const parse = (bytes: ArrayBuffer | null, type: unknown): unknown => {
    if (bytes === null) return null;
    const kind = typeOf(type);
    if (kind === "arrayBuffer") return bytes.slice(0);
    if (kind === "stream") return new Response(bytes.slice(0)).body;
    const text = new TextDecoder().decode(bytes);
    return kind === "json" ? JSON.parse(text) : text;
  };

  async function write(name: string, apply: () => Promise<void>, value: string | null): Promise<void> {
    const rule = failing.find((f) => f.times > 0 && f.match(name));
    if (rule) {
      rule.times--;
      throw new Error(`injected KV failure writing ${name}`);
    }
    inAir.set(name, (inAir.get(name) ?? 0) + 1);
    maxInAir = Math.max(maxInAir, inAir.get(name)!);
    try {
      if (holding?.(name)) await new Promise<void>((resolve) => heldWrites.push({ name, release: resolve }));
      const before = await real.getWithMetadata(name, "arrayBuffer");
      await apply();
      // Readers elsewhere keep seeing what was there (the first value, if writes follow each other).
      const earlier = visible(name);
      shadows.set(name, {
        value: earlier ? earlier.value : before.value,
        metadata: earlier ? earlier.metadata : before.metadata,
        until: clock + PROPAGATION_MS,
      });
      landed.push({ name, value });
    } finally {
      inAir.set(name, inAir.get(name)! - 1);
    }
  }

  const kv = {
    async get(key: string | string[], type?: unknown): Promise<unknown> {
      if (Array.isArray(key)) {
        const fresh = (await real.get(key, "text")) as Map<string, string | null>;
        const out = new Map<string, unknown>();
        for (const name of key) {
          const shadow = visible(name);
          const text = fresh.get(name) ?? null;
          out.set(name, shadow ? parse(shadow.value, type) : text !== null && typeOf(type) === "json" ? JSON.parse(text) : text);
        }
        return out;
      }
      const shadow = visible(key);
      if (shadow) return parse(shadow.value, type);
      return real.get(key, type as "text");
    },
    async getWithMetadata(key: string, type?: unknown): Promise<unknown> {
      const shadow = visible(key);
      if (shadow) return { value: parse(shadow.value, type), metadata: shadow.value === null ? null : shadow.metadata, cacheStatus: null };
      return real.getWithMetadata(key, type as "text");
    },
    async list(options: KVNamespaceListOptions = {}): Promise<unknown> {
      const page = await real.list(options);
      const keys = page.keys.filter((k) => visible(k.name)?.value !== null);
      // Keys deleted less than 60 s ago are still listed (one page is enough for the tests' namespaces).
      for (const [name, shadow] of shadows) {
        if (visible(name) && shadow.value !== null && name.startsWith(options.prefix ?? "") && !keys.some((k) => k.name === name)) {
          keys.push({ name, metadata: shadow.metadata } as KVNamespaceListKey<unknown>);
        }
      }
      keys.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const key of keys) {
        const shadow = visible(key.name);
        if (shadow) (key as { metadata?: unknown }).metadata = shadow.metadata;
      }
      return { ...page, keys };
    },
    put(name: string, value: string, options?: KVNamespacePutOptions): Promise<void> {
      return write(name, () => real.put(name, value, options), textOf(value));
    },
    delete(name: string): Promise<void> {
      return write(name, () => real.delete(name), null);
    },
  };

  return {
    kv: kv as unknown as KVNamespace,
    now: () => clock,
    advance(ms) {
      clock += ms;
    },
    hold(match) {
      holding = match;
    },
    async release() {
      holding = null;
      const waiting = heldWrites;
      heldWrites = [];
      for (const held of waiting) held.release();
      // Let the released writes land before the test goes on.
      for (let i = 0; i < 20 && [...inAir.values()].some((n) => n > 0); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    held: () => heldWrites.map((h) => h.name),
    fail(match, times) {
      failing.push({ match, times });
    },
    landed,
    maxConcurrentPerKey: () => maxInAir,
  };
}
