/**
 * The fingerprint of a create request, kept beside its idempotency key to tell "the same request
 * again" from "another request with the same key": HMAC-SHA256 of the request's canonical JSON
 * (keys sorted, so key order does not matter), keyed with a random per-home key.
 *
 * Why keyed and not a plain SHA-256: a webhook create carries the raw `secret`, and the
 * fingerprint is stored in sentinels.json, which plugins see through SentinelView and which ends
 * up in backups. A plain hash of a body that holds the secret is an offline oracle for it: anyone
 * holding the hash can test guesses (a short, hand-made secret falls fast). Keyed with 32 random
 * bytes that live only in credentials.json (0600, the home's secret store), the fingerprint says
 * nothing without that key. The request body itself is never stored.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { CredentialStore } from "../plugin-api/context.js";
import { canonicalJson } from "../runtime/canonical-json.js";

const NAMESPACE = "sentinels";
const KEY_NAME = "idempotency-hmac-key";

export class RequestFingerprints {
  private key?: Promise<Buffer>;

  constructor(private readonly credentials: CredentialStore) {}

  /** `hmac-sha256:<hex>` of the canonical JSON of `request`. */
  async of(request: unknown): Promise<string> {
    const key = await this.hmacKey();
    return `hmac-sha256:${createHmac("sha256", key).update(canonicalJson(request)).digest("hex")}`;
  }

  /** The home's key, made on first use (load on first use: a daemon that never sees a key never makes one). */
  private hmacKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  private async loadKey(): Promise<Buffer> {
    const stored = await this.credentials.get(NAMESPACE, KEY_NAME);
    if (stored !== undefined) return Buffer.from(stored, "base64");
    // Key generation uses the OS directly (DESIGN.md: a stand-in buys nothing and invites a weak one).
    await this.credentials.set(NAMESPACE, KEY_NAME, randomBytes(32).toString("base64"));
    // Read back: whatever is stored is the key every later fingerprint uses.
    return Buffer.from((await this.credentials.get(NAMESPACE, KEY_NAME))!, "base64");
  }
}
