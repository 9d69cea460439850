/** The documents besides the sitemaps: the browser view and the Atom feed. */
import { flag, wholeNumber } from "../variable.ts";

export const BROWSER_VIEW = flag({
  name: "BROWSER_VIEW",
  default: true,
});
export const FEED_SIZE = wholeNumber({ name: "FEED_SIZE", default: 100, min: 0, max: 1_000 });
export const FEED_IN_INDEX = flag({ name: "FEED_IN_INDEX", default: false });
