/**
 * The manifest a run is rebuilding: it starts as the published one (or the walk's plan) and each
 * re-planned range replaces its shards; src/regen/publish.ts publishes what it ends as.
 */
import type { ShardEntry } from "../manifest/manifest.ts";

/** The manifest being rebuilt: shards per section, in key order. */
export class ManifestDraft {
  readonly #sections = new Map<string, ShardEntry[]>();

  constructor(shards: readonly ShardEntry[]) {
    for (const shard of shards) this.#list(shard.section).push({ ...shard });
    for (const list of this.#sections.values()) list.sort((a, b) => a.firstKey - b.firstKey);
  }

  #list(section: string): ShardEntry[] {
    let list = this.#sections.get(section);
    if (!list) this.#sections.set(section, (list = []));
    return list;
  }

  entries(section: string): readonly ShardEntry[] {
    return this.#sections.get(section) ?? [];
  }

  sections(): string[] {
    return [...this.#sections.keys()].sort();
  }

  /** The shard whose range holds `key`, and where that range ends (undefined: open-ended). */
  containing(section: string, key: number): { entry: ShardEntry; end: number | undefined } | undefined {
    const list = this.entries(section);
    let i = list.length - 1;
    while (i >= 0 && list[i]!.firstKey > key) i--;
    if (i < 0) return undefined;
    const next = list[i + 1];
    return { entry: list[i]!, end: next ? next.firstKey - 1 : undefined };
  }

  maxN(section: string): number {
    return this.entries(section).reduce((max, s) => Math.max(max, s.n), 0);
  }

  /** OR of the section's extension kinds: the guess for a new shard's namespaces. */
  kinds(section: string): number {
    return this.entries(section).reduce((all, s) => all | (s.extKinds ?? 0), 0);
  }

  /** Replaces the shards with first keys in [lo, hi] by `shards`. */
  replace(section: string, lo: number, hi: number, shards: readonly ShardEntry[]): void {
    const kept = this.entries(section).filter((s) => s.firstKey < lo || s.firstKey > hi);
    const merged = [...kept, ...shards].sort((a, b) => a.firstKey - b.firstKey);
    this.#sections.set(section, merged);
  }

  all(): ShardEntry[] {
    return this.sections().flatMap((section) => [...this.entries(section)]);
  }
}
