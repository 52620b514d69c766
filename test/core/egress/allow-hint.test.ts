/** Issue 28: the SSRF gate names the exact `webhooks.allowSubnets` command for a receiver the user may own. */
import { describe, expect, it } from "vitest";
import { allowSubnetsFix } from "../../../core/egress/allow-hint.js";
import { classifyAddress } from "../../../core/egress/classify.js";

const fix = (addresses: string[], inEffect: string[] = []) => allowSubnetsFix(addresses.map(classifyAddress), inEffect);

describe("allowSubnetsFix", () => {
  it("names each address's kind and exempts exactly it, keeping the entries in effect", () => {
    expect(fix(["127.0.0.1"])).toBe(
      `127.0.0.1 is a loopback address; to allow your own receiver: svc config set webhooks.allowSubnets '["127.0.0.1/32"]'`,
    );
    expect(fix(["192.168.1.20", "fd00::5"], ["10.0.0.0/8"])).toBe(
      `192.168.1.20 is a private address, fd00::5 is a private (unique-local) address; to allow your own receiver: svc config set webhooks.allowSubnets '["10.0.0.0/8","192.168.1.20/32","fd00::5/128"]'`,
    );
    expect(fix(["100.101.102.103"])).toMatch(/is a shared \(CGNAT or VPN\) address.*"100\.101\.102\.103\/32"/);
  });

  it("an IPv4-mapped address is exempted by its IPv4 form, as the allow list matches it", () => {
    expect(fix(["::ffff:127.0.0.1"])).toMatch(/127\.0\.0\.1 is a loopback address.*'\["127\.0\.0\.1\/32"\]'/);
  });

  it("no hint when any blocked address is one nobody runs a receiver on", () => {
    expect(fix(["192.0.2.1"])).toBeUndefined();
    expect(fix(["127.0.0.1", "224.0.0.1"])).toBeUndefined();
    expect(fix([])).toBeUndefined();
  });
});
