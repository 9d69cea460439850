import { describe, expect, it } from "vitest";
import { ConfigError } from "../error.ts";
import { readVariable } from "../variable.ts";
import { ACCESS_TEAM_DOMAIN, ACCESS_TEST_ISSUER } from "./access.ts";

const team = (value: string) => readVariable({ ACCESS_TEAM_DOMAIN: value }, ACCESS_TEAM_DOMAIN);
const testIssuer = (value: string) => readVariable({ ACCESS_TEST_ISSUER: value }, ACCESS_TEST_ISSUER);

describe("ACCESS_TEAM_DOMAIN", () => {
  it("is https://<team>.cloudflareaccess.com, written with or without the scheme", () => {
    expect(team("myteam.cloudflareaccess.com")).toBe("https://myteam.cloudflareaccess.com");
    expect(team("https://myteam.cloudflareaccess.com/")).toBe("https://myteam.cloudflareaccess.com");
    expect(team("HTTPS://My-Team.CloudflareAccess.com")).toBe("https://my-team.cloudflareaccess.com");
  });

  it("refuses any other scheme or host: the signing keys are fetched from it", () => {
    for (const value of [
      "http://team.example.com",
      "http://myteam.cloudflareaccess.com",
      "https://team.example.com",
      "https://myteam.cloudflareaccess.com.evil.example",
      "https://evil.example/.cloudflareaccess.com",
      "https://a.b.cloudflareaccess.com",
      "https://myteam.cloudflareaccess.com:8443",
      "https://user@myteam.cloudflareaccess.com",
      "https://myteam.cloudflareaccess.com/path",
      "ftp://myteam.cloudflareaccess.com",
    ]) {
      expect(() => team(value), value).toThrow(ConfigError);
    }
  });
});

describe("ACCESS_TEST_ISSUER", () => {
  it("is a loopback http origin only", () => {
    expect(testIssuer("http://127.0.0.1:18540/")).toBe("http://127.0.0.1:18540");
    expect(testIssuer("http://localhost:8794")).toBe("http://localhost:8794");
    for (const value of ["https://team.example.com", "http://10.0.0.1:80", "http://127.0.0.1.evil.example:80", "http://localhost"]) {
      expect(() => testIssuer(value), value).toThrow(ConfigError);
    }
  });
});
