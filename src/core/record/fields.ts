/**
 * The kinds of field a record is made of, as zod schemas: their messages name the full field
 * (zod calls error functions with the issue's full path), custom checks report through `fail`
 * with the rule. Strings are checked for XML-forbidden characters before anything else, as a
 * sitemap must never carry them.
 */
import { z } from "zod";
import { normalizeW3cDatetime } from "../datetime.ts";
import { normalizeLoc } from "../url.ts";
import { describeCharAt, findXmlForbiddenChar } from "../xml-chars.ts";
import { echo, isAbsent } from "./echo.ts";
import { fail, fieldOf } from "./issues.ts";

type Payload<T> = z.core.ParsePayload<T>;
type RawIssue = z.core.$ZodRawIssue;

/** An error function for zod's own issues: `absent` when the value is missing, else `wrong`. */
function messages(absent: (field: string, input: unknown) => string, wrong: (field: string, input: unknown) => string): (iss: RawIssue) => string {
  return (iss) => {
    const field = fieldOf(iss.path ?? []);
    return isAbsent(iss.input) ? absent(field, iss.input) : wrong(field, iss.input);
  };
}

const mustBe = (what: string) => (field: string, input: unknown) => `${field} must be ${what}, got ${echo(input)}`;
const isRequired = (field: string) => `${field} is required`;

/** Reports the first XML-forbidden character; true when the string is clean. */
export function xmlClean(payload: Payload<string>): boolean {
  const value = payload.value;
  const bad = findXmlForbiddenChar(value);
  if (bad === -1) return true;
  fail(payload, "xml-char", (f) => `${f} contains ${describeCharAt(value, bad)} at position ${bad}, which XML 1.0 forbids`);
  return false;
}

/**
 * A string (type error otherwise) that passes `rule` once it is XML-clean. One check per field,
 * doing its steps in order, is measurably cheaper than a chain of zod checks.
 */
export function cleanString(rule: (payload: Payload<string>) => void): z.ZodString {
  return z.string({ error: messages(isRequired, mustBe("a string")) }).check((payload) => {
    if (xmlClean(payload)) rule(payload);
  });
}

/** Characters as XSD `maxLength` counts them (code points, not UTF-16 units). */
function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Non-empty text without XML-forbidden characters, at most `max` characters; `rule` may check more. */
export function text(max: number, rule?: (payload: Payload<string>) => void): z.ZodString {
  return z
    .string({ error: messages(isRequired, mustBe("a string")) })
    .check((payload) => {
      if (payload.value === "") return fail(payload, "required", isRequired);
      if (!xmlClean(payload)) return;
      const length = charLength(payload.value);
      if (length > max) return fail(payload, "length", (f) => `${f} must be at most ${max} characters, got ${length}`);
      rule?.(payload);
    })
    .meta({ minLength: 1, maxLength: max });
}

const urlRequired = (field: string) => `${field} is required (an absolute http or https URL)`;

/** Absolute http(s) URL, normalised like `loc` (any host: images and players live on CDNs). */
export function url(): z.ZodString {
  return z
    .string({ error: messages(urlRequired, mustBe("a string")) })
    .check((payload) => {
      if (payload.value === "") return fail(payload, "required", urlRequired);
      const result = normalizeLoc(payload.value);
      if (result.ok) payload.value = result.loc;
      else fail(payload, result.rule, (f) => result.message.replace(/^loc\b/, f));
    })
    .meta({ format: "uri", maxLength: 2047 });
}

/** W3C datetime, normalised; `withTime` demands a time (which then always has seconds and a zone). */
export function datetime(withTime: boolean): z.ZodString {
  return text(64, (payload) => {
    const raw = payload.value;
    const normalised = normalizeW3cDatetime(raw);
    if (normalised !== null && (!withTime || normalised.length > 10)) {
      payload.value = normalised;
      return;
    }
    fail(payload, "w3c-datetime", (f) =>
      withTime
        ? `${f} must be a W3C datetime with a time and zone, e.g. 2024-05-01T09:30:00Z or 2024-05-01T09:30:00+02:00, got ${echo(raw)}`
        : `${f} must be a W3C date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm), got ${echo(raw)}`,
    );
  }).meta({ description: withTime ? "W3C datetime with time and zone" : "W3C date or datetime" });
}

const DIGITS = /^\d+$/;

/** A whole number from `min` to `max`, or its decimal digits as a string. */
export function integer(min: number, max: number): z.ZodType<number, number | string> {
  const wrong = mustBe("a whole number");
  return z
    .union([z.number().meta({ type: "integer", minimum: min, maximum: max }), z.string().meta({ pattern: "^[0-9]+$" })], {
      error: messages(isRequired, wrong),
    })
    .check((payload) => {
      const raw = payload.value;
      const n = typeof raw === "string" && DIGITS.test(raw) ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isInteger(n)) return fail(payload, "type", (f) => wrong(f, raw));
      if (n < min || n > max) return fail(payload, "range", (f) => `${f} must be from ${min} to ${max}, got ${n}`);
      payload.value = n;
    }) as unknown as z.ZodType<number, number | string>;
}

/** A finite number from `min` to `max`, rounded to two decimals. */
export function rating(min: number, max: number): z.ZodNumber {
  return z
    .number({ error: messages(isRequired, mustBe("a number")) })
    .check((payload) => {
      const n = payload.value;
      if (n < min || n > max) return fail(payload, "range", (f) => `${f} must be from ${min.toFixed(1)} to ${max.toFixed(1)}, got ${n}`);
      payload.value = Math.round(n * 100) / 100;
    })
    .meta({ minimum: min, maximum: max });
}

const YES: ReadonlySet<unknown> = new Set(["yes", "Yes", "YES"]);

/** true/false, or the XSD's yes/no spellings. */
export function yesNo(): z.ZodType<boolean, boolean | string> {
  return z
    .union([z.boolean(), z.enum(["yes", "Yes", "YES", "no", "No", "NO"])], {
      error: messages(isRequired, mustBe('true or false (or "yes"/"no")')),
    })
    .check((payload) => {
      if (typeof payload.value === "string") payload.value = YES.has(payload.value);
    }) as unknown as z.ZodType<boolean, boolean | string>;
}

/** One of `allowed` (required). */
export function oneOf<const T extends readonly [string, ...string[]]>(allowed: T): z.ZodEnum<{ [K in T[number]]: K }> {
  const list = allowed.join(", ");
  return z.enum(allowed, {
    error: messages(
      (f) => `${f} is required (one of ${list})`,
      (f, input) => `${f} must be one of ${list}, got ${echo(input)}`,
    ),
  });
}

/** A list given as an array or a space-separated string; each item must match `item`; duplicates dropped. */
export function tokenList(item: RegExp, what: string): z.ZodType<string[], string | string[]> {
  return z
    .unknown()
    .check((payload) => {
      const value = payload.value;
      let tokens: unknown[];
      if (typeof value === "string") tokens = value.split(/\s+/).filter(Boolean);
      else if (Array.isArray(value)) tokens = value;
      else return fail(payload, "type", (f) => `${f} must be an array of ${what} (or a space-separated string), got ${echo(value)}`);
      if (tokens.length === 0) return fail(payload, "required", (f) => `${f} must list at least one of ${what}`);
      const bad = tokens.find((t) => typeof t !== "string" || !item.test(t));
      if (bad !== undefined) return fail(payload, "format", (f) => `${f} must contain only ${what}, got ${echo(bad)}`);
      payload.value = [...new Set(tokens as string[])];
    })
    .meta({
      anyOf: [
        { type: "array", items: { type: "string", pattern: item.source }, minItems: 1 },
        { type: "string", description: "space-separated" },
      ],
      description: what,
    }) as unknown as z.ZodType<string[], string | string[]>;
}

/**
 * zod's array, refusing more than `def.maxItems` items before it checks any (a 10,000-image list
 * costs one issue, not 10,000 parses). A schema type rather than a preprocessing pipe, for speed.
 */
const ZodBoundedArray = z.core.$constructor("ZodBoundedArray", (inst: z.ZodArray, def: z.core.$ZodArrayDef & { maxItems: number }) => {
  z.ZodArray.init(inst, def);
  const parse = inst._zod.parse;
  const max = def.maxItems;
  inst._zod.parse = (payload, ctx) => {
    const value = payload.value;
    if (!Array.isArray(value) || value.length <= max) return parse(payload, ctx);
    const n = value.length;
    fail(payload, "max-count", (f) => `${f} has ${n} entries; at most ${max} are allowed per URL`);
    return payload;
  };
});

/** An array of at most `max` items. */
export function list<T extends z.ZodType>(item: T, max: number): z.ZodArray<T> {
  const error = messages(mustBe("an array"), mustBe("an array"));
  return new ZodBoundedArray({ type: "array", element: item, maxItems: max, error }).meta({ maxItems: max }) as unknown as z.ZodArray<T>;
}

/**
 * An object of exactly `shape`'s fields; unknown fields are issues (see issues.ts). Optional fields
 * given as null or "" are left out of the output, unless `keepAbsentKeys` (for a caller that reads
 * the fields one by one anyway and would pay for the clean-up on every object).
 */
export function object<S extends z.core.$ZodLooseShape>(shape: S, options: { keepAbsentKeys?: boolean } = {}): z.ZodObject<S, z.core.$strict> {
  const allowed = Object.keys(shape).join(", ");
  const strict = z.strictObject(shape, {
    error: (iss) => (iss.code === "unrecognized_keys" ? allowed : `${fieldOf(iss.path ?? [])} must be an object, got ${echo(iss.input)}`),
  });
  if (options.keepAbsentKeys) return strict;
  const optionalKeys = Object.keys(shape).filter((key) => shape[key]!._zod.optin === "optional");
  // Fields given as null or "" are absent: left out of the output, as if they were never sent.
  // Only optional fields can be, and a loop over them is cheaper than a for…in over the output.
  return strict.check((payload) => {
    const value = payload.value as Record<string, unknown>;
    for (const key of optionalKeys) if (value[key] === undefined && key in value) delete value[key];
  });
}

/**
 * zod's optional, where null and "" (an empty CSV column) are absent too. A schema type of its
 * own rather than a preprocessing pipe: a pipe allocates per field, and this runs for every field
 * of every record.
 */
const ZodAbsentable = z.core.$constructor("ZodAbsentable", (inst: z.ZodOptional, def: z.core.$ZodOptionalDef) => {
  z.ZodOptional.init(inst, def);
  const inner = def.innerType;
  inst._zod.parse = (payload, ctx) => {
    const value = payload.value;
    if (value === undefined || value === null || value === "") {
      payload.value = undefined;
      return payload;
    }
    return inner._zod.run(payload, ctx);
  };
});

/** An optional field: undefined, null and "" are all absent. */
export function optional<T extends z.ZodType>(schema: T): z.ZodOptional<T> {
  return new ZodAbsentable({ type: "optional", innerType: schema }) as unknown as z.ZodOptional<T>;
}

/** A check of an object that runs even when some of its fields failed (payload.value then holds them as given). */
export function always<T>(check: (payload: Payload<T>) => void): z.core.$ZodCheck<T> {
  const ch = new z.core.$ZodCheck({ check: "custom", when: () => true }) as z.core.$ZodCheck<T>;
  ch._zod.check = check;
  return ch;
}
