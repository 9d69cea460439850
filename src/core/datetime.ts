/**
 * W3C Datetime (https://www.w3.org/TR/NOTE-datetime) parsing for `<lastmod>`.
 *
 * Deliberately not `Date.parse`: it accepts "yesterday"-like junk in some engines, silently rolls
 * Feb 30 into March, and treats zone-less times as local time. We accept exactly the six W3C
 * forms and emit only the two the sitemap XSD and the search engines agree on.
 */

// YYYY[-MM[-DD[Thh:mm[:ss[.s+]]TZD]]]. `[0-9]` rather than `\d` keeps it ASCII-only on purpose,
// and `T`/`Z` are uppercase only, as in the W3C note (RFC 3339 allows lowercase; W3C does not).
const W3C_DATETIME = /^([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2}))?)?)?$/;

/** Real-world UTC offsets span -12:00 to +14:00; ±14:00 is the symmetric bound we accept. */
const MAX_OFFSET_MINUTES = 14 * 60;

/** Longest valid input is bounded only by the fraction; cap it so junk never reaches the regex. */
const MAX_RAW_LENGTH = 64;

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

function isValidOffset(tzd: string): boolean {
  if (tzd === "Z") return true;
  const h = Number(tzd.slice(1, 3));
  const m = Number(tzd.slice(4, 6));
  return m <= 59 && h * 60 + m <= MAX_OFFSET_MINUTES;
}

/**
 * Normalises a W3C Datetime to `YYYY-MM-DD` (date-only inputs; missing month/day become 01)
 * or `YYYY-MM-DDThh:mm:ss(Z|±hh:mm)` (inputs with a time; missing seconds become `:00`, the
 * fraction is dropped, the zone is kept as written). Returns null for anything else.
 */
export function normalizeW3cDatetime(raw: string): string | null {
  if (raw.length < 4 || raw.length > MAX_RAW_LENGTH) return null;
  const m = W3C_DATETIME.exec(raw);
  if (m === null) return null;
  const [, yyyy = "", mm = "01", dd = "01", hh, min, ss = "00", tzd] = m;

  const year = Number(yyyy);
  const month = Number(mm);
  const day = Number(dd);
  if (year < 1) return null; // year 0000 does not exist in the W3C profile (ISO 8601 "AD" years)
  if (month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;

  const date = `${yyyy}-${mm}-${dd}`;
  if (hh === undefined || min === undefined || tzd === undefined) return date;

  // No leap second (:60) and no 24:00: engines reject both, and neither is in the W3C note.
  if (Number(hh) > 23 || Number(min) > 59 || Number(ss) > 59) return null;
  if (!isValidOffset(tzd)) return null;
  return `${date}T${hh}:${min}:${ss}${tzd}`;
}

/**
 * The `YYYY-MM-DD` part of a value returned by normalizeW3cDatetime (for sites that want
 * date-only `<lastmod>`, e.g. for Baidu).
 *
 * For a datetime with an offset this is the calendar date *as written in that offset*, not
 * converted to UTC: `2024-01-01T23:30:00-05:00` gives `2024-01-01` although it is already
 * Jan 2 in UTC. That is the date the site meant, and `<lastmod>` is a hint, not a timestamp
 * engines compare to the second.
 */
export function toDateOnly(normalised: string): string {
  return normalised.slice(0, 10);
}
