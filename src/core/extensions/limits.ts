/** Limits of the extensions (Google's, or ours where Google sets none; see docs/extensions.md). */
export const MAX_IMAGES_PER_URL = 1_000;
export const MAX_VIDEOS_PER_URL = 100;
export const MAX_ALTERNATES_PER_URL = 1_000;
export const MAX_VIDEO_TAGS = 32;
export const MAX_VIDEO_TITLE = 100;
export const MAX_VIDEO_DESCRIPTION = 2_048;
export const MAX_VIDEO_DURATION = 28_800;
export const MAX_UPLOADER_NAME = 255;
/** Our cap for other free-text values (captions, tags, news titles, publication names). */
export const MAX_TEXT = 2_048;
/** News sitemaps: ≤ 1,000 `<news:news>` per file, only articles from the last 2 days. */
export const MAX_NEWS_PER_SITEMAP = 1_000;
export const NEWS_MAX_AGE_MS = 2 * 24 * 60 * 60 * 1000;
