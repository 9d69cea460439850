/** Formatting of change stamps (ms since epoch) for XML and HTTP. */

/** `YYYY-MM-DDThh:mm:ssZ`: the W3C form every engine accepts (seconds, explicit zone). */
export function w3cSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** RFC 9110 HTTP-date, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
