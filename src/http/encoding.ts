/** Content negotiation for gzip: which of a document's three representations a request gets. */
import type { ShardFile } from "../documents/paths.ts";

/** `xml` identity, `xml` gzip-encoded, or the `.xml.gz` file: three representations, three ETags. */
export type Representation = "identity" | "gzip" | "file";

export function chooseRepresentation(request: Request, file: ShardFile): Representation {
  if (file === "xml.gz") return "file";
  return clientAcceptsGzip(request) ? "gzip" : "identity";
}

/**
 * Whether the client takes gzip. On Cloudflare the `Accept-Encoding` a Worker sees is the edge's
 * own (it always asks for gzip/br); the client's value is `request.cf.clientAcceptEncoding`. Locally
 * there is no `cf` value and the header is the client's. No header at all → identity: the safe
 * answer for clients that never asked for compression.
 */
function clientAcceptsGzip(request: Request): boolean {
  const cf = (request as { cf?: { clientAcceptEncoding?: unknown } }).cf;
  const header = typeof cf?.clientAcceptEncoding === "string" ? cf.clientAcceptEncoding : request.headers.get("accept-encoding");
  return acceptsGzip(header);
}

/** RFC 9110 §12.5.3: `gzip` (or `x-gzip`) with q > 0, or `*` with q > 0 when gzip is not named. */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(",")) {
    const [token = "", ...params] = part.split(";");
    const coding = token.trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split("=");
      if (key?.trim().toLowerCase() === "q") q = Number(value?.trim() ?? "1");
    }
    if (Number.isNaN(q)) q = 0;
    if (coding === "gzip" || coding === "x-gzip") gzip = Math.max(gzip ?? 0, q);
    else if (coding === "*") any = q;
  }
  return (gzip ?? any ?? 0) > 0;
}
