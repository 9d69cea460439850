/** Helpers for reading untrusted input values and echoing them in issue messages. */

/** Echoed values are cut so one hostile record cannot bloat an error response. */
const MAX_ECHO = 100;

/** A value for an error message: JSON-quoted and truncated, so control characters stay visible but harmless. */
export function echo(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > MAX_ECHO ? `${value.slice(0, MAX_ECHO)}…` : value);
  }
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return Array.isArray(value) ? "an array" : `a value of type ${typeof value}`;
}

/** A field name for an error message, truncated like values. */
export function echoKey(key: string): string {
  return key.length > MAX_ECHO ? `${key.slice(0, MAX_ECHO)}…` : key;
}

/** CSV and form imports give "" for an empty column: treat it like an absent field. */
export function isAbsent(value: unknown): value is undefined | null | "" {
  return value === undefined || value === null || value === "";
}

/** A JSON object (not an array, not a class instance). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
