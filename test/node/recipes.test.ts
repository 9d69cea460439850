/**
 * The recipes of docs/architecture.md ("Where a change goes") stay true: the files they name
 * exist, and a change made by following them is complete. A new extension field reaches the
 * writers, the sitemap reader and the docs; a new configuration variable is read by parseConfig.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { VARIABLES } from "../../src/config/variables/index.ts";
import { AlternatesSchema } from "../../src/core/extensions/alternates.ts";
import { ImagesSchema } from "../../src/core/extensions/images.ts";
import { NewsSchema } from "../../src/core/extensions/news.ts";
import { VideosSchema } from "../../src/core/extensions/videos.ts";

const ROOT = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), "utf8");

/** The recipes this test keeps: the paragraphs of "Where a change goes" that start with these titles. */
const RECIPES = [
  "A new document format",
  "A new record store",
  "A new notification channel",
  "A new admin route",
  "A new configuration variable",
  "A new extension field",
  "A new snapshot store",
];

function recipe(title: string): string {
  const doc = read("docs/architecture.md");
  const start = doc.indexOf(`**${title}**`);
  expect(start, `docs/architecture.md has the recipe "${title}"`).toBeGreaterThanOrEqual(0);
  const next = doc.slice(start + 1).search(/\n\*\*A new |\n## /);
  return doc.slice(start, next < 0 ? undefined : start + 1 + next);
}

/** The field names of an object schema, looking through `z.preprocess` (images: a URL is shorthand). */
function fieldsOf(schema: z.ZodType): string[] {
  const def = schema._zod.def as { type: string; out?: z.ZodType; shape?: Record<string, z.ZodType> };
  if (def.type === "pipe" && def.out) return fieldsOf(def.out);
  expect(def.type).toBe("object");
  return Object.keys(def.shape ?? {});
}

describe("recipes in docs/architecture.md", () => {
  for (const title of RECIPES) {
    it(`"${title}" names files that exist`, () => {
      const paths = [...recipe(title).matchAll(/`((?:src|test|docs|scripts)\/[^`\s]*)`/g)].map((m) => m[1]!).filter((path) => !/[<*]/.test(path));
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) expect(existsSync(new URL(path, ROOT)), path).toBe(true);
    });
  }

  it("a new configuration variable: parseConfig reads every declared one", () => {
    const parse = read("src/config/parse.ts");
    for (const variable of VARIABLES) expect(parse, variable.name).toContain(`v.${variable.name}`);
  });

  describe("a new extension field: every schema field is written, read from sitemaps and documented", () => {
    const writers = read("src/core/extensions/writers.ts");
    const reader = read("src/ingest/sitemap-xml.ts");
    const docs = read("docs/extensions.md");
    const kinds = {
      images: fieldsOf(ImagesSchema.element),
      videos: fieldsOf(VideosSchema.element),
      news: fieldsOf(NewsSchema),
      alternates: fieldsOf(AlternatesSchema.element),
    };
    for (const [kind, fields] of Object.entries(kinds)) {
      it(`${kind}: ${fields.join(", ")}`, () => {
        for (const field of fields) {
          expect(writers, `writers.ts reads .${field}`).toMatch(new RegExp(`\\.${field}\\b`));
          expect(reader, `"${field}" in sitemap-xml.ts`).toContain(`"${field}"`);
          expect(docs, `${field} in docs/extensions.md`).toMatch(new RegExp(`\\b${field}\\b`));
        }
      });
    }
  });
});
