/** `videos`: Google's video sitemap extension, up to 100 per URL. */
import { z } from "zod";
import { isPlainObject } from "../record/echo.ts";
import { always, datetime, integer, list, object, oneOf, optional, rating, text, tokenList, url, yesNo } from "../record/fields.ts";
import { fail } from "../record/issues.ts";
import { MAX_UPLOADER_NAME, MAX_VIDEOS_PER_URL, MAX_VIDEO_DESCRIPTION, MAX_VIDEO_DURATION, MAX_VIDEO_TAGS, MAX_VIDEO_TITLE } from "./limits.ts";

const RELATIONSHIP = ["allow", "deny"] as const;

const UploaderSchema = object({ name: text(MAX_UPLOADER_NAME), info: optional(url()) });

const VideoSchema = object({
  thumbnail_loc: url(),
  title: text(MAX_VIDEO_TITLE),
  description: text(MAX_VIDEO_DESCRIPTION),
  content_loc: optional(url().describe("the video file; content_loc or player_loc (or both) is required")),
  player_loc: optional(url().describe("a player page; content_loc or player_loc (or both) is required")),
  duration: optional(integer(1, MAX_VIDEO_DURATION).describe("seconds")),
  expiration_date: optional(datetime(false)),
  rating: optional(rating(0, 5)),
  view_count: optional(integer(0, Number.MAX_SAFE_INTEGER)),
  publication_date: optional(datetime(false)),
  tags: optional(list(text(256), MAX_VIDEO_TAGS)),
  family_friendly: optional(yesNo()),
  restriction: optional(object({ relationship: oneOf(RELATIONSHIP), countries: tokenList(/^[A-Z]{2}$/, 'ISO 3166 country codes like "US"') })),
  requires_subscription: optional(yesNo()),
  uploader: optional(
    z
      .preprocess((value) => (typeof value === "string" ? { name: value } : value), UploaderSchema)
      .meta({ description: "the uploader; a string is shorthand for { name }" }),
  ),
  platform: optional(object({ relationship: oneOf(RELATIONSHIP), platforms: tokenList(/^(?:web|mobile|tv)$/, "web, mobile, tv") })),
  live: optional(yesNo()),
}).check(
  always((payload) => {
    const video = payload.value;
    if (!isPlainObject(video)) return; // not an object: already reported
    if (video.content_loc === undefined && video.player_loc === undefined) {
      fail(payload, "required", (f) => `${f.slice(0, f.lastIndexOf("."))} needs content_loc (the video file) or player_loc (a player page), or both`, [
        "content_loc",
      ]);
    }
  }),
);

export const VideosSchema = list(VideoSchema, MAX_VIDEOS_PER_URL);
