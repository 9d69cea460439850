/**
 * The User-Agent of the Worker's own outbound requests (the origin's robots.txt; mirrors and
 * notification may use it too): the product, its version and where to read about it, so that an
 * origin's logs and WAF can tell who is asking. A request without one is blocked by many WAF rules,
 * which once turned an origin's rules into "no file" (issue 34). In src/core so that every layer may
 * import it; the version is package.json's (test/node/robots-e2e.test.ts checks it on the wire).
 */
const VERSION = "0.1.0";
const PROJECT_URL = "https://github.com/edge-sitemaps/edge-sitemaps";

export const USER_AGENT = `edge-sitemaps/${VERSION} (+${PROJECT_URL})`;
