/**
 * The shape of one environment variable's declaration, the rule builders shared by the
 * declarations (src/config/variables/), and the one reader of a variable's value. What a variable
 * does is written once, in the README's configuration tables.
 *
 * A value is trimmed first; empty or whitespace-only means unset. A rejected value becomes a
 * ConfigError with the variable's `rule`, or, when a check of its own adds a `custom` issue, that
 * issue's message (which names the entry, never the value).
 */
import { z } from "zod";
import { ConfigError } from "./error.ts";

/** "default": unset takes `default`; "optional": unset is null (a feature off); "required": unset is an error. */
export type Presence = "default" | "optional" | "required";

export interface Variable<T = unknown, P extends Presence = Presence> {
  readonly name: string;
  readonly presence: P;
  /** From the trimmed text to the value. */
  readonly schema: z.ZodType<T, string>;
  /** The default as it would be written in wrangler.jsonc, parsed by `schema` like a set value; null: none. */
  readonly default: string | null;
  /** What unset means when there is no default (the README's default column), e.g. "— (off)". */
  readonly unset?: string;
  /** What the value must be: "must …", completing "configuration error: NAME …". */
  readonly rule: string;
  /** A secret (`wrangler secret put`), not one of wrangler.jsonc's vars. */
  readonly secret: boolean;
}

type Value<T, P extends Presence> = P extends "optional" ? T | null : T;

/** Splits a list var on commas and/or whitespace. */
export function listVar(raw: string | undefined): string[] {
  return raw ? raw.split(/[\s,]+/).filter(Boolean) : [];
}

/** The value of `variable` in `env`; throws ConfigError naming the variable and its rule. */
export function readVariable<T, P extends Presence>(env: object, variable: Variable<T, P>): Value<T, P> {
  const raw = (env as Readonly<Record<string, unknown>>)[variable.name];
  if (raw !== undefined && raw !== null && typeof raw !== "string") throw new ConfigError(variable.name, "must be a string");
  const text = raw?.trim() || variable.default;
  if (text === null) {
    if (variable.presence === "required") throw new ConfigError(variable.name, variable.rule);
    return null as Value<T, P>;
  }
  const result = variable.schema.safeParse(text);
  if (result.success) return result.data as Value<T, P>;
  const issue = result.error.issues[0];
  throw new ConfigError(variable.name, issue?.code === "custom" ? issue.message : variable.rule);
}

/** A declaration as written: `secret` defaults to false. */
type Declaration<T, P extends Presence> = Omit<Variable<T, P>, "secret"> & { secret?: boolean };

/** A variable whose rule the declaration writes with zod itself. */
export function variable<T, P extends Presence>(declaration: Declaration<T, P>): Variable<T, P> {
  return { ...declaration, secret: declaration.secret ?? false };
}

interface Described<D> {
  name: string;
  default: D;
}

/** A whole number in [min, max] (digits only: no sign, exponent or fraction). */
export function wholeNumber(d: Described<number> & { min: number; max: number }): Variable<number, "default"> {
  return variable({
    name: d.name,
    presence: "default",
    schema: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().min(d.min).max(d.max)),
    default: String(d.default),
    rule: `must be a whole number from ${d.min} to ${d.max}`,
  });
}

/** One of a few words. */
export function oneOf<const A extends readonly [string, ...string[]]>(d: Described<A[number]> & { allowed: A }): Variable<A[number], "default"> {
  return variable({
    name: d.name,
    presence: "default",
    schema: z.enum(d.allowed),
    default: d.default,
    rule: `must be one of ${d.allowed.map((a) => `"${a}"`).join(", ")}`,
  });
}

/** "true"/"1" or "false"/"0". */
export function flag(d: Described<boolean>): Variable<boolean, "default"> {
  const word = oneOf({ ...d, allowed: ["true", "false", "1", "0"], default: d.default ? "true" : "false" });
  return { ...word, schema: word.schema.transform((v) => v === "true" || v === "1") };
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/**
 * An https URL, or http to a loopback host: a credential (a bearer token, a signed assertion) is
 * only ever sent encrypted, except to a stand-in on this machine. A deployed Worker cannot reach a
 * loopback address, so the exception is a local one.
 */
export function isSecureUrl(text: string): boolean {
  try {
    const url = new URL(text);
    if (url.protocol === "https:") return true;
    const host = url.hostname;
    return url.protocol === "http:" && (host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host));
  } catch {
    return false;
  }
}

/** A template with placeholders is a URL once they are filled: checked with sample values. */
export function isUrlTemplate(text: string, samples: Readonly<Record<string, string>>): boolean {
  let sample = text;
  for (const [placeholder, value] of Object.entries(samples)) sample = sample.replaceAll(placeholder, value);
  return isHttpUrl(sample);
}
