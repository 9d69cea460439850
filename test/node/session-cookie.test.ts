/**
 * The admin session cookie's name and attributes by host: `__Host-`, `Secure` and `Path=/` everywhere but
 * plain http on a loopback or `.test` host, where a browser would drop them (issue 52, local sign-in).
 */
import { describe, expect, it } from "vitest";
import { LOCAL_SESSION_COOKIE, SESSION_COOKIE, clearedSessionCookie, isLocalPlainHttp, sessionCookie } from "../../src/admin/auth/session.ts";

const localHosts = ["localhost", "127.0.0.1", "127.8.9.10", "[::1]", "t4.test", "a.b.test", "app.localhost"];
const publicHosts = ["example.com", "test.example.com", "example.test.com", "localhost.example", "128.0.0.1", "mytest", "latest"];
const id = "A".repeat(43);

describe("session cookie by host", () => {
  for (const host of [...localHosts, ...publicHosts])
    for (const protocol of ["http:", "https:"]) {
      const url = `${protocol}//${host}:8787/sitemap-admin/sign-in`;
      const local = protocol === "http:" && localHosts.includes(host);
      it(`${url}: ${local ? "plain local cookie" : "__Host- cookie"}`, () => {
        expect(isLocalPlainHttp(url)).toBe(local);
        for (const cookie of [sessionCookie(id, url), clearedSessionCookie(url)]) {
          const [pair, ...attrs] = cookie.split("; ");
          expect(pair!.split("=")[0]).toBe(local ? LOCAL_SESSION_COOKIE : SESSION_COOKIE);
          expect(attrs.includes("Secure")).toBe(!local);
          expect(attrs).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/"]));
        }
      });
    }
});
