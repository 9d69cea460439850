/**
 * `<loc>` values of a sitemap or sitemap index, entity-decoded. A regex, not a parser: fast enough
 * for polls that run while things change, and pure, so workerd and Node tests share it.
 */
export function locsOf(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) =>
    m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&amp;", "&"),
  );
}
