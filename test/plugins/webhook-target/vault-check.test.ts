import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SentinelView } from "../../../core/plugin-api/index.js";
import { checkVaultFile } from "../../../plugins/webhook-target/vault-check.js";
import { makeTempHome } from "../../support/cli.js";

const sentinel = (id: string, secretRef: string, status = "active"): SentinelView => ({
  id,
  status,
  createdAt: 0,
  spec: {
    match: [{ subject: "x" }],
    until: { kind: "never" },
    target: { kind: "webhook", url: "https://example.com/h", secretRef },
  },
});

describe("checkVaultFile (svc doctor, read-only)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  const vault = () => join(home, "sentinels-secrets.json");
  const write = (secrets: Record<string, unknown>, mode = 0o600) =>
    writeFile(vault(), JSON.stringify({ version: 1, secrets }), { mode });
  beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-vault-check-", { inMemory: true })));
  afterEach(() => cleanup());

  it("a vault holding every sentinel's secret, mode 0600, is fine", async () => {
    await write({ swsec_1: { sentinelId: "snt_a", secret: "whsec_x", createdAt: 1 } });
    expect(await checkVaultFile(home, [sentinel("snt_a", "swsec_1")])).toEqual([]);
  });

  it("a missing ref is an error for an active sentinel, info for an expired one; unreferenced rows are info", async () => {
    await write({ swsec_9: { sentinelId: "snt_gone", secret: "whsec_x", createdAt: 1 } });
    const found = await checkVaultFile(home, [sentinel("snt_a", "swsec_1"), sentinel("snt_b", "swsec_2", "expired")]);
    expect(found.map((f) => [f.severity, f.message.slice(0, 48)])).toEqual([
      ["error", "the secret of webhook sentinel snt_a (swsec_1) i"],
      ["info", "the secret of webhook sentinel snt_b (swsec_2) i"],
      ["info", "secret swsec_9 (of sentinel snt_gone) is referen"],
    ]);
  });

  it("mode 0644 is an error; a file that is not JSON is an error that never quotes it", async () => {
    await write({ swsec_1: { sentinelId: "snt_a", secret: "whsec_x", createdAt: 1 } });
    await chmod(vault(), 0o644);
    expect(await checkVaultFile(home, [sentinel("snt_a", "swsec_1")])).toEqual([
      expect.objectContaining({
        severity: "error",
        file: "sentinels-secrets.json",
        message: expect.stringContaining("mode 0644"),
      }),
    ]);
    await writeFile(vault(), '{"secrets": {"swsec_1": {"secret": "whsec_TOPSECRET"');
    await chmod(vault(), 0o600);
    const found = await checkVaultFile(home, [sentinel("snt_a", "swsec_1")]);
    expect(found).toEqual([expect.objectContaining({ severity: "error", file: "sentinels-secrets.json" })]);
    expect(JSON.stringify(found)).not.toContain("TOPSECRET");
  });
});
