import { describe, expect, it } from "vitest";
import { clientKey } from "./client-address.ts";

const keyOf = (address?: string): string | null =>
  clientKey(new Request("https://site.example/sitemap-admin/sign-in", address === undefined ? {} : { headers: { "CF-Connecting-IP": address } }));

describe("clientKey", () => {
  it("keeps an IPv4 address whole", () => {
    expect(keyOf("192.0.2.1")).toBe("v4:192.0.2.1");
    expect(keyOf("192.0.2.1")).not.toBe(keyOf("192.0.2.2"));
  });

  it("keys an IPv6 address by its /64, however it is written", () => {
    const key = "v6:2001:db8:1:2::/64";
    for (const address of [
      "2001:db8:1:2::1",
      "2001:DB8:1:2:ffff:ffff:ffff:ffff",
      "2001:0db8:0001:0002:0000:0000:0000:0001",
      "2001:db8:1:2::192.0.2.1",
      "2001:db8:1:2::",
      "2001:db8:1:2:1:2:3:4",
      "2001:db8:1:2::9%eth0",
    ]) {
      expect(keyOf(address), address).toBe(key);
    }
    expect(keyOf("2001:db8:1:3::1")).toBe("v6:2001:db8:1:3::/64");
    expect(keyOf("::1")).toBe("v6:0:0:0:0::/64");
  });

  it("reads an IPv4 address written as IPv6 as the IPv4 address", () => {
    expect(keyOf("::ffff:192.0.2.7")).toBe("v4:192.0.2.7");
    expect(keyOf("::ffff:c000:207")).toBe("v4:192.0.2.7");
  });

  it("has no key for a missing or malformed address (never one shared key)", () => {
    for (const address of [undefined, "", "unknown", "256.0.0.1", "192.0.2", "2001:db8::1::2", "2001:db8:1:2:3:4:5:6:7", "2001:db8:1:2:3:4:5", "g::1"]) {
      expect(keyOf(address), String(address)).toBeNull();
    }
  });
});
