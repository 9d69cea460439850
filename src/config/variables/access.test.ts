import { describe, expect, it } from "vitest";
import { ConfigError } from "../error.ts";
import { readVariable } from "../variable.ts";
import { ACCESS_SERVICE_TOKEN_IDS, ACCESS_TEAM_DOMAIN, ACCESS_TEST_ISSUER } from "./access.ts";

const team = (value: string) => readVariable({ ACCESS_TEAM_DOMAIN: value }, ACCESS_TEAM_DOMAIN);
const testIssuer = (value: string) => readVariable({ ACCESS_TEST_ISSUER: value }, ACCESS_TEST_ISSUER);
const serviceTokens = (value: string) => readVariable({ ACCESS_SERVICE_TOKEN_IDS: value }, ACCESS_SERVICE_TOKEN_IDS);

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

describe("ACCESS_SERVICE_TOKEN_IDS", () => {
  it("is a list of Client IDs; unset is none", () => {
    expect([...(serviceTokens(" 88bf3b6d86161464f6509f7219099e57.access  0123456789abcdef0123456789abcdef.access ") ?? [])]).toEqual([
      "88bf3b6d86161464f6509f7219099e57.access",
      "0123456789abcdef0123456789abcdef.access",
    ]);
    expect(serviceTokens("")).toBeNull();
    expect(readVariable({}, ACCESS_SERVICE_TOKEN_IDS)).toBeNull();
  });

  it("refuses anything that is not a Client ID, naming the rule and not the value", () => {
    for (const value of ["a.access b/c", "id=1", "*", `${"x".repeat(129)}.access`]) {
      expect(() => serviceTokens(value), value).toThrow(ConfigError);
    }
    expect(() => serviceTokens("secret/value")).toThrow(/ACCESS_SERVICE_TOKEN_IDS must be Access service token Client IDs/);
    expect(() => serviceTokens("secret/value")).not.toThrow(/secret\/value/);
  });
});
