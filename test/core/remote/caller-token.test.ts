/**
 * The caller token's derivation is a wire contract between the relay, the daemon and callers of
 * any version: pinned here to a value computed independently with OpenSSL 3
 * (`openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt key:<host token> -kdfopt info:svc-tunnel-caller/1 HKDF`).
 */
import { describe, expect, it } from "vitest";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";

describe("callerTokenFor", () => {
  it('is base64url of HKDF-SHA-256(host token, no salt, "svc-tunnel-caller/1"), 32 bytes', () => {
    const caller = callerTokenFor("tunnel-token-5b1e3c0d9a");
    expect(Buffer.from(caller, "base64url").toString("hex")).toBe(
      "1e8fa640c98e5733817e99ff0a74ea26d088ed8d849285317b99a4e64c934b75",
    );
    expect(caller).toBe("Ho-mQMmOVzOBfpn_CnTqJtCI7Y2EkoUxe5mk5kyTS3U");
  });

  it("differs from its host token and between host tokens", () => {
    expect(callerTokenFor("a")).not.toBe("a");
    expect(callerTokenFor("a")).not.toBe(callerTokenFor("b"));
  });
});
