/**
 * Validation of a record's extension fields (`images`, `videos`, `news`, `alternates`): untrusted
 * input in, the normalised RecordExtensions the writers can emit without further checks out.
 * Every issue is reported (field paths like `images[3].loc`, `news.publication.language`), so a
 * client fixes a rejected batch in one round trip.
 */
import { echo, echoKey, isAbsent, isPlainObject } from "../input.ts";
import { normalizeW3cDatetime } from "../datetime.ts";
import type { ValidationIssue, ValidationRule } from "../errors.ts";
import { normalizeLoc } from "../url.ts";
import { describeCharAt, findXmlForbiddenChar } from "../xml-chars.ts";
import {
  type AlternateLink,
  type ImageEntry,
  MAX_ALTERNATES_PER_URL,
  MAX_IMAGES_PER_URL,
  MAX_TEXT,
  MAX_UPLOADER_NAME,
  MAX_VIDEO_DESCRIPTION,
  MAX_VIDEO_DURATION,
  MAX_VIDEO_TAGS,
  MAX_VIDEO_TITLE,
  MAX_VIDEOS_PER_URL,
  type NewsEntry,
  type RecordExtensions,
  type Relationship,
  type VideoEntry,
  type VideoPlatform,
} from "./types.ts";

/** Where issues go: validate.ts's per-record sink has exactly this shape. */
export interface IssueReporter {
  add(field: string, rule: ValidationRule, message: string): void;
}

export const EXTENSION_FIELDS: ReadonlySet<string> = new Set(["images", "videos", "news", "alternates"]);

/** ISO 639-1/2 codes, or the two Chinese variants Google News wants (sitemap-news.xsd pattern). */
const NEWS_LANGUAGE = /^(?:zh-cn|zh-tw|[a-z]{2,3})$/;
/** BCP 47 language[-script][-region] as search engines take it in hreflang, or x-default. */
const HREFLANG = /^(?:x-default|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*)$/;
const COUNTRY = /^[A-Z]{2}$/;
const PLATFORMS: readonly VideoPlatform[] = ["web", "mobile", "tv"];
const RELATIONSHIPS: readonly Relationship[] = ["allow", "deny"];
const YES = new Set(["yes", "Yes", "YES"]);
const NO = new Set(["no", "No", "NO"]);

/** Characters as XSD `maxLength` counts them (code points, not UTF-16 units). */
function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Context of one record's extension check. */
class Checker {
  readonly out: IssueReporter;
  ok = true;
  constructor(out: IssueReporter) {
    this.out = out;
  }

  add(field: string, rule: ValidationRule, message: string): void {
    this.ok = false;
    this.out.add(field, rule, message);
  }

  object(field: string, value: unknown, allowed: readonly string[]): Record<string, unknown> | null {
    if (!isPlainObject(value)) {
      this.add(field, "type", `${field} must be an object, got ${echo(value)}`);
      return null;
    }
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        const name = echoKey(key);
        this.add(`${field}.${name}`, "unknown-field", `unknown field ${echo(key)} in ${field} (allowed: ${allowed.join(", ")})`);
      }
    }
    return value;
  }

  array(field: string, value: unknown, max: number): unknown[] | null {
    if (!Array.isArray(value)) {
      this.add(field, "type", `${field} must be an array, got ${echo(value)}`);
      return null;
    }
    if (value.length > max) {
      this.add(field, "max-count", `${field} has ${value.length} entries; at most ${max} are allowed per URL`);
      return null;
    }
    return value;
  }

  /** Non-empty text without XML-forbidden characters, at most `max` characters. */
  text(field: string, value: unknown, max: number, required: boolean): string | undefined {
    if (isAbsent(value)) {
      if (required) this.add(field, "required", `${field} is required`);
      return undefined;
    }
    if (typeof value !== "string") {
      this.add(field, "type", `${field} must be a string, got ${echo(value)}`);
      return undefined;
    }
    const bad = findXmlForbiddenChar(value);
    if (bad !== -1) {
      this.add(field, "xml-char", `${field} contains ${describeCharAt(value, bad)} at position ${bad}, which XML 1.0 forbids`);
      return undefined;
    }
    const length = charLength(value);
    if (length > max) {
      this.add(field, "length", `${field} must be at most ${max} characters, got ${length}`);
      return undefined;
    }
    return value;
  }

  /** Absolute http(s) URL, normalised like `loc` (but any host: images and players live on CDNs). */
  url(field: string, value: unknown, required: boolean): string | undefined {
    if (isAbsent(value)) {
      if (required) this.add(field, "required", `${field} is required (an absolute http or https URL)`);
      return undefined;
    }
    if (typeof value !== "string") {
      this.add(field, "type", `${field} must be a string, got ${echo(value)}`);
      return undefined;
    }
    const result = normalizeLoc(value);
    if (!result.ok) {
      this.add(field, result.rule, result.message.replace(/^loc\b/, field));
      return undefined;
    }
    return result.loc;
  }

  /** W3C datetime, normalised; `withTime` demands a time (which then always has seconds and a zone). */
  datetime(field: string, value: unknown, required: boolean, withTime: boolean): string | undefined {
    const raw = this.text(field, value, 64, required);
    if (raw === undefined) return undefined;
    const normalised = normalizeW3cDatetime(raw);
    if (normalised === null || (withTime && normalised.length <= 10)) {
      this.add(
        field,
        "w3c-datetime",
        withTime
          ? `${field} must be a W3C datetime with a time and zone, e.g. 2024-05-01T09:30:00Z or 2024-05-01T09:30:00+02:00, got ${echo(raw)}`
          : `${field} must be a W3C date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm), got ${echo(raw)}`,
      );
      return undefined;
    }
    return normalised;
  }

  integer(field: string, value: unknown, min: number, max: number): number | undefined {
    if (isAbsent(value)) return undefined;
    const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof n !== "number" || !Number.isInteger(n)) {
      this.add(field, "type", `${field} must be a whole number, got ${echo(value)}`);
      return undefined;
    }
    if (n < min || n > max) {
      this.add(field, "range", `${field} must be from ${min} to ${max}, got ${n}`);
      return undefined;
    }
    return n;
  }

  /** true/false, or the XSD's yes/no spellings. */
  yesNo(field: string, value: unknown): boolean | undefined {
    if (isAbsent(value)) return undefined;
    if (typeof value === "boolean") return value;
    if (typeof value === "string" && YES.has(value)) return true;
    if (typeof value === "string" && NO.has(value)) return false;
    this.add(field, "type", `${field} must be true or false (or "yes"/"no"), got ${echo(value)}`);
    return undefined;
  }

  oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T | undefined {
    if (isAbsent(value)) {
      this.add(field, "required", `${field} is required (one of ${allowed.join(", ")})`);
      return undefined;
    }
    if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
    this.add(field, "enum", `${field} must be one of ${allowed.join(", ")}, got ${echo(value)}`);
    return undefined;
  }

  /** A list given as an array or a space-separated string; each item must match `item`. */
  tokenList(field: string, value: unknown, item: (token: string) => boolean, what: string): string[] | undefined {
    let tokens: unknown[];
    if (typeof value === "string") tokens = value.split(/\s+/).filter(Boolean);
    else if (Array.isArray(value)) tokens = value;
    else {
      this.add(field, "type", `${field} must be an array of ${what} (or a space-separated string), got ${echo(value)}`);
      return undefined;
    }
    if (tokens.length === 0) {
      this.add(field, "required", `${field} must list at least one of ${what}`);
      return undefined;
    }
    const bad = tokens.find((t) => typeof t !== "string" || !item(t));
    if (bad !== undefined) {
      this.add(field, "format", `${field} must contain only ${what}, got ${echo(bad)}`);
      return undefined;
    }
    return [...new Set(tokens as string[])];
  }
}

function checkImage(c: Checker, field: string, value: unknown): ImageEntry | undefined {
  // Shorthand: a bare URL string is an image with just a loc.
  if (typeof value === "string") {
    const loc = c.url(`${field}.loc`, value, true);
    return loc === undefined ? undefined : { loc };
  }
  const obj = c.object(field, value, ["loc", "caption", "geo_location", "title", "license"]);
  if (!obj) return undefined;
  const loc = c.url(`${field}.loc`, obj["loc"], true);
  const caption = c.text(`${field}.caption`, obj["caption"], MAX_TEXT, false);
  const geo = c.text(`${field}.geo_location`, obj["geo_location"], MAX_TEXT, false);
  const title = c.text(`${field}.title`, obj["title"], MAX_TEXT, false);
  const license = c.url(`${field}.license`, obj["license"], false);
  if (loc === undefined) return undefined;
  const image: ImageEntry = { loc };
  if (caption !== undefined) image.caption = caption;
  if (geo !== undefined) image.geo_location = geo;
  if (title !== undefined) image.title = title;
  if (license !== undefined) image.license = license;
  return image;
}

const VIDEO_FIELDS = [
  "thumbnail_loc", "title", "description", "content_loc", "player_loc", "duration", "expiration_date", "rating",
  "view_count", "publication_date", "tags", "family_friendly", "restriction", "requires_subscription", "uploader",
  "platform", "live",
] as const;

function checkVideo(c: Checker, field: string, value: unknown, recordLoc: string | null): VideoEntry | undefined {
  const obj = c.object(field, value, VIDEO_FIELDS);
  if (!obj) return undefined;
  const before = c.ok;
  c.ok = true;
  const thumbnail = c.url(`${field}.thumbnail_loc`, obj["thumbnail_loc"], true);
  const title = c.text(`${field}.title`, obj["title"], MAX_VIDEO_TITLE, true);
  const description = c.text(`${field}.description`, obj["description"], MAX_VIDEO_DESCRIPTION, true);
  const contentLoc = c.url(`${field}.content_loc`, obj["content_loc"], false);
  const playerLoc = c.url(`${field}.player_loc`, obj["player_loc"], false);
  if (isAbsent(obj["content_loc"]) && isAbsent(obj["player_loc"])) {
    c.add(`${field}.content_loc`, "required", `${field} needs content_loc (the video file) or player_loc (a player page), or both`);
  }
  if (recordLoc !== null && contentLoc === recordLoc) {
    c.add(`${field}.content_loc`, "format", `${field}.content_loc must be the video file, not the page's own loc`);
  }
  if (recordLoc !== null && playerLoc === recordLoc) {
    c.add(`${field}.player_loc`, "format", `${field}.player_loc must be the player, not the page's own loc`);
  }
  const video: VideoEntry = { thumbnail_loc: thumbnail ?? "", title: title ?? "", description: description ?? "" };
  if (contentLoc !== undefined) video.content_loc = contentLoc;
  if (playerLoc !== undefined) video.player_loc = playerLoc;
  const duration = c.integer(`${field}.duration`, obj["duration"], 1, MAX_VIDEO_DURATION);
  if (duration !== undefined) video.duration = duration;
  const expiration = c.datetime(`${field}.expiration_date`, obj["expiration_date"], false, false);
  if (expiration !== undefined) video.expiration_date = expiration;
  if (!isAbsent(obj["rating"])) {
    const rating = obj["rating"];
    if (typeof rating !== "number" || !Number.isFinite(rating)) c.add(`${field}.rating`, "type", `${field}.rating must be a number, got ${echo(rating)}`);
    else if (rating < 0 || rating > 5) c.add(`${field}.rating`, "range", `${field}.rating must be from 0.0 to 5.0, got ${rating}`);
    else video.rating = Math.round(rating * 100) / 100;
  }
  const views = c.integer(`${field}.view_count`, obj["view_count"], 0, Number.MAX_SAFE_INTEGER);
  if (views !== undefined) video.view_count = views;
  const published = c.datetime(`${field}.publication_date`, obj["publication_date"], false, false);
  if (published !== undefined) video.publication_date = published;
  if (!isAbsent(obj["tags"])) {
    const tags = c.array(`${field}.tags`, obj["tags"], MAX_VIDEO_TAGS);
    const clean = tags?.map((t, i) => c.text(`${field}.tags[${i}]`, t, 256, true));
    if (clean && clean.every((t) => t !== undefined)) video.tags = clean as string[];
  }
  const familyFriendly = c.yesNo(`${field}.family_friendly`, obj["family_friendly"]);
  if (familyFriendly !== undefined) video.family_friendly = familyFriendly;
  if (!isAbsent(obj["restriction"])) {
    const r = c.object(`${field}.restriction`, obj["restriction"], ["relationship", "countries"]);
    if (r) {
      const relationship = c.oneOf(`${field}.restriction.relationship`, r["relationship"], RELATIONSHIPS);
      const countries = c.tokenList(`${field}.restriction.countries`, r["countries"], (t) => COUNTRY.test(t), "ISO 3166 country codes like \"US\"");
      if (relationship && countries) video.restriction = { relationship, countries };
    }
  }
  const subscription = c.yesNo(`${field}.requires_subscription`, obj["requires_subscription"]);
  if (subscription !== undefined) video.requires_subscription = subscription;
  if (!isAbsent(obj["uploader"])) {
    const u = typeof obj["uploader"] === "string" ? { name: obj["uploader"] } : c.object(`${field}.uploader`, obj["uploader"], ["name", "info"]);
    if (u) {
      const name = c.text(`${field}.uploader.name`, u["name"], MAX_UPLOADER_NAME, true);
      const info = c.url(`${field}.uploader.info`, u["info"], false);
      if (name !== undefined) video.uploader = info === undefined ? { name } : { name, info };
    }
  }
  if (!isAbsent(obj["platform"])) {
    const p = c.object(`${field}.platform`, obj["platform"], ["relationship", "platforms"]);
    if (p) {
      const relationship = c.oneOf(`${field}.platform.relationship`, p["relationship"], RELATIONSHIPS);
      const platforms = c.tokenList(`${field}.platform.platforms`, p["platforms"], (t) => (PLATFORMS as readonly string[]).includes(t), "web, mobile, tv");
      if (relationship && platforms) video.platform = { relationship, platforms: platforms as VideoPlatform[] };
    }
  }
  const live = c.yesNo(`${field}.live`, obj["live"]);
  if (live !== undefined) video.live = live;
  const ok = c.ok;
  c.ok = before && ok;
  return ok ? video : undefined;
}

function checkNews(c: Checker, value: unknown): NewsEntry | undefined {
  const obj = c.object("news", value, ["publication", "publication_date", "title"]);
  if (!obj) return undefined;
  let name: string | undefined;
  let language: string | undefined;
  if (isAbsent(obj["publication"])) {
    c.add("news.publication", "required", "news.publication is required ({ name, language })");
  } else {
    const publication = c.object("news.publication", obj["publication"], ["name", "language"]);
    if (publication) {
      name = c.text("news.publication.name", publication["name"], MAX_TEXT, true);
      const lang = c.text("news.publication.language", publication["language"], 16, true);
      if (lang !== undefined) {
        if (NEWS_LANGUAGE.test(lang)) language = lang;
        else c.add("news.publication.language", "format", `news.publication.language must be an ISO 639 code of 2 or 3 lowercase letters, or zh-cn / zh-tw, got ${echo(lang)}`);
      }
    }
  }
  const date = c.datetime("news.publication_date", obj["publication_date"], true, true);
  const title = c.text("news.title", obj["title"], MAX_TEXT, true);
  if (name === undefined || language === undefined || date === undefined || title === undefined) return undefined;
  return { publication: { name, language }, publication_date: date, title };
}

function checkAlternates(c: Checker, value: unknown, recordLoc: string | null): AlternateLink[] | undefined {
  const list = c.array("alternates", value, MAX_ALTERNATES_PER_URL);
  if (!list) return undefined;
  const before = c.ok;
  c.ok = true;
  const links: AlternateLink[] = [];
  const seen = new Map<string, number>();
  list.forEach((item, i) => {
    const field = `alternates[${i}]`;
    const obj = c.object(field, item, ["hreflang", "href"]);
    if (!obj) return;
    const lang = c.text(`${field}.hreflang`, obj["hreflang"], 64, true);
    const href = c.url(`${field}.href`, obj["href"], true);
    if (lang === undefined) return;
    if (!HREFLANG.test(lang)) {
      c.add(`${field}.hreflang`, "format", `${field}.hreflang must be a language code like "en", "en-GB", "zh-Hant" or "x-default", got ${echo(lang)}`);
      return;
    }
    const key = lang.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) {
      c.add(`${field}.hreflang`, "hreflang-duplicate", `${field}.hreflang ${echo(lang)} is already used by alternates[${first}]; each language appears once`);
      return;
    }
    seen.set(key, i);
    if (href !== undefined) links.push({ hreflang: lang, href });
  });
  if (c.ok && recordLoc !== null && links.length > 0 && !links.some((l) => l.href === recordLoc)) {
    c.add("alternates", "hreflang-self", `alternates must include the URL itself (${recordLoc}) with its own hreflang: every variant lists all variants, itself included`);
  }
  const ok = c.ok;
  c.ok = before && ok;
  return ok && links.length > 0 ? links : undefined;
}

/**
 * Validates the extension fields of one record. `raw` holds only keys of EXTENSION_FIELDS;
 * `recordLoc` is the record's normalised loc (null when it did not normalise: then the checks that
 * compare with it are skipped). Returns the normalised extensions, or undefined when there are none
 * or an issue was reported.
 */
export function validateExtensions(out: IssueReporter, raw: Record<string, unknown>, recordLoc: string | null): RecordExtensions | undefined {
  const c = new Checker(out);
  const ext: RecordExtensions = {};
  if (!isAbsent(raw["images"])) {
    const list = c.array("images", raw["images"], MAX_IMAGES_PER_URL);
    const images = list?.map((item, i) => checkImage(c, `images[${i}]`, item));
    if (images && images.length > 0 && images.every((x) => x !== undefined)) ext.images = images as ImageEntry[];
  }
  if (!isAbsent(raw["videos"])) {
    const list = c.array("videos", raw["videos"], MAX_VIDEOS_PER_URL);
    const videos = list?.map((item, i) => checkVideo(c, `videos[${i}]`, item, recordLoc));
    if (videos && videos.length > 0 && videos.every((x) => x !== undefined)) ext.videos = videos as VideoEntry[];
  }
  if (!isAbsent(raw["news"])) {
    const news = checkNews(c, raw["news"]);
    if (news) ext.news = news;
  }
  if (!isAbsent(raw["alternates"])) {
    const alternates = checkAlternates(c, raw["alternates"], recordLoc);
    if (alternates) ext.alternates = alternates;
  }
  return c.ok && Object.keys(ext).length > 0 ? ext : undefined;
}

/** Canonical text of an alternate set, for comparing the sets of two variants. */
function alternateSetKey(links: readonly AlternateLink[]): string {
  return links
    .map((l) => `${l.hreflang.toLowerCase()} ${l.href}`)
    .sort()
    .join("\n");
}

export interface BatchEntry {
  index: number;
  /** The record's loc as given (for the issue). */
  rawLoc: string;
  loc: string;
  alternates: readonly AlternateLink[] | undefined;
}

/**
 * hreflang consistency within one batch: when a record lists another record of the same batch as
 * its variant, that record must list exactly the same set (every variant lists all variants).
 * Records outside the batch cannot be checked here; docs/extensions.md says so.
 */
export function alternateSetIssues(entries: readonly BatchEntry[]): ValidationIssue[] {
  const byLoc = new Map<string, BatchEntry>();
  for (const e of entries) byLoc.set(e.loc, e);
  const issues: ValidationIssue[] = [];
  const reported = new Set<number>();
  for (const e of entries) {
    if (!e.alternates) continue;
    const key = alternateSetKey(e.alternates);
    for (const link of e.alternates) {
      if (link.href === e.loc) continue;
      const other = byLoc.get(link.href);
      if (!other || reported.has(other.index)) continue;
      if (other.alternates && alternateSetKey(other.alternates) === key) continue;
      reported.add(other.index);
      issues.push({
        index: other.index,
        loc: other.rawLoc,
        field: "alternates",
        rule: "hreflang-mismatch",
        message: other.alternates
          ? `alternates differ from those of record ${e.index} (${e.loc}), which lists this URL as hreflang "${link.hreflang}": every variant must list the same set`
          : `record ${e.index} (${e.loc}) lists this URL as hreflang "${link.hreflang}", but this record has no alternates: every variant must list the same set`,
      });
    }
  }
  return issues;
}
