/** Values several declaration files share: time units in seconds, and rules and samples of URL variables. */

export const HOUR = 3_600;
export const DAY = 86_400;
export const YEAR = 31_536_000;

/** Sample values that turn an `{origin}`/`{host}` template into a URL, to check it is one. */
export const ORIGIN_SAMPLES = { "{origin}": "https://example.com", "{host}": "example.com" };
export const HTTP_URL_RULE = "must be an http(s) URL";
export const SECURE_URL_RULE = "must be an https URL (http only to a loopback host: 127.0.0.0/8, localhost, [::1], for local tests)";
