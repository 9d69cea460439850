import { describe, expect, it } from "vitest";
import { normalizeW3cDatetime, toDateOnly } from "./datetime.ts";

describe("normalizeW3cDatetime: accepted forms", () => {
  it.each([
    // YYYY
    ["1997", "1997-01-01"],
    ["0001", "0001-01-01"],
    ["9999", "9999-01-01"],
    // YYYY-MM
    ["1997-07", "1997-07-01"],
    ["2024-12", "2024-12-01"],
    // YYYY-MM-DD
    ["1997-07-16", "1997-07-16"],
    ["2024-02-29", "2024-02-29"], // leap year
    ["2000-02-29", "2000-02-29"], // divisible by 400
    ["2023-04-30", "2023-04-30"],
    ["2023-12-31", "2023-12-31"],
    // YYYY-MM-DDThh:mmTZD
    ["1997-07-16T19:20+01:00", "1997-07-16T19:20:00+01:00"],
    ["1997-07-16T19:20Z", "1997-07-16T19:20:00Z"],
    // YYYY-MM-DDThh:mm:ssTZD
    ["1997-07-16T19:20:30+01:00", "1997-07-16T19:20:30+01:00"],
    ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"],
    ["2024-01-01T23:59:59-05:00", "2024-01-01T23:59:59-05:00"],
    // YYYY-MM-DDThh:mm:ss.sTZD: fraction of any length is dropped, not rounded
    ["1997-07-16T19:20:30.45+01:00", "1997-07-16T19:20:30+01:00"],
    ["2024-01-01T12:00:00.999999999Z", "2024-01-01T12:00:00Z"],
    ["2024-01-01T12:00:00.5Z", "2024-01-01T12:00:00Z"],
    // zone kept as written
    ["2024-06-01T08:00:00+00:00", "2024-06-01T08:00:00+00:00"],
    ["2024-06-01T08:00:00-00:00", "2024-06-01T08:00:00-00:00"],
    ["2024-06-01T08:00:00+14:00", "2024-06-01T08:00:00+14:00"],
    ["2024-06-01T08:00:00-14:00", "2024-06-01T08:00:00-14:00"],
    ["2024-06-01T08:00:00+05:45", "2024-06-01T08:00:00+05:45"], // Nepal
    ["2024-06-01T08:00:00-09:30", "2024-06-01T08:00:00-09:30"],
  ])("%s → %s", (raw, expected) => {
    expect(normalizeW3cDatetime(raw)).toBe(expected);
  });
});

describe("normalizeW3cDatetime: rejected inputs", () => {
  it.each([
    // words and empty
    ["", "empty"],
    ["yesterday", "a word"],
    ["now", "a word"],
    ["today", "a word"],
    ["null", "a word"],
    // zone problems
    ["2024-01-01T12:00:00", "time without a zone"],
    ["2024-01-01T12:00", "hh:mm without a zone"],
    ["2017-06-20-04:00", "date with a zone (XSD accepts it, Google does not)"],
    ["2024-01-01Z", "date with Z"],
    ["2024-01-01T12:00:00+0100", "offset without colon"],
    ["2024-01-01T12:00:00+01", "offset without minutes"],
    ["2024-01-01T12:00:00+14:01", "offset beyond +14:00"],
    ["2024-01-01T12:00:00-15:00", "offset beyond -14:00"],
    ["2024-01-01T12:00:00+01:60", "offset minutes 60"],
    ["2024-01-01T12:00:00+99:99", "offset nonsense"],
    ["2024-01-01T12:00:00 UTC", "zone name"],
    ["2024-01-01T12:00:00GMT", "zone name"],
    // invalid calendar dates
    ["2024-02-30", "Feb 30"],
    ["2023-02-29", "Feb 29 in a non-leap year"],
    ["1900-02-29", "Feb 29 in a century year"],
    ["2024-04-31", "Apr 31"],
    ["2024-06-31", "Jun 31"],
    ["2024-09-31", "Sep 31"],
    ["2024-11-31", "Nov 31"],
    ["2024-01-32", "day 32"],
    ["2024-01-00", "day 0"],
    ["2024-13", "month 13"],
    ["2024-13-01", "month 13"],
    ["2024-00-10", "month 0"],
    ["0000", "year 0"],
    ["0000-01-01", "year 0"],
    ["10000-01-01", "five-digit year"],
    ["-2024-01-01", "negative year"],
    ["+2024-01-01", "signed year"],
    ["24-01-01", "two-digit year"],
    ["2024-1-1", "single-digit month and day"],
    ["20240101", "basic ISO format"],
    // invalid times
    ["2024-01-01T24:00:00Z", "hour 24"],
    ["2024-01-01T25:00Z", "hour 25"],
    ["2024-01-01T12:60:00Z", "minute 60"],
    ["2024-01-01T12:00:60Z", "leap second"],
    ["2024-01-01T12Z", "hour only"],
    ["2024-01-01T12:00:00.Z", "empty fraction"],
    ["2024-01-01T12:00:00,5Z", "comma fraction"],
    ["2024-01-01T12:00.5Z", "fraction without seconds"],
    // syntax leniency
    ["2024-01-01 12:00:00Z", "space instead of T"],
    ["2024-01-01t12:00:00z", "lowercase t and z"],
    [" 2024-01-01", "leading space"],
    ["2024-01-01 ", "trailing space"],
    ["2024-01-01\n", "trailing newline"],
    ["2024-01-01T12:00:00Z\x00", "trailing NUL"],
    ["２０２４-01-01", "fullwidth digits"],
    ["٢٠٢٤-01-01", "Arabic-Indic digits"],
    ["Mon, 01 Jan 2024 00:00:00 GMT", "RFC 1123 date"],
    ["1704067200", "Unix timestamp"],
    ["2024-01-01T12:00:00Z2024", "trailing junk"],
    [`2024-01-01T12:00:00.${"1".repeat(100)}Z`, "absurdly long fraction"],
  ])("rejects %j (%s)", (raw) => {
    expect(normalizeW3cDatetime(raw)).toBeNull();
  });
});

describe("toDateOnly", () => {
  it.each([
    ["2024-01-01", "2024-01-01"],
    ["2024-01-01T00:00:00Z", "2024-01-01"],
    // the date as written in its offset, not converted to UTC (already Jan 2 there)
    ["2024-01-01T23:30:00-05:00", "2024-01-01"],
    ["2024-01-02T00:30:00+09:00", "2024-01-02"],
  ])("%s → %s", (normalised, expected) => {
    expect(toDateOnly(normalised)).toBe(expected);
  });

  it("composes with normalizeW3cDatetime for every accepted form", () => {
    for (const raw of ["2024", "2024-03", "2024-03-05", "2024-03-05T10:00Z", "2024-03-05T10:00:00.1+02:00"]) {
      const normalised = normalizeW3cDatetime(raw);
      expect(normalised).not.toBeNull();
      expect(toDateOnly(normalised ?? "")).toMatch(/^2024-0[13]-0[15]$/);
    }
  });
});
