import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRandom } from "../../../core/runtime/clock.js";
import { SecretVault, VAULT_FILE } from "../../../plugins/webhook-target/vault.js";
import { makeTempHome } from "../../support/cli.js";
import { secretOf } from "./support/harness.js";

describe("secret vault (sentinels-secrets.json)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-vault-")));
  afterEach(() => cleanup());

  it("stores secrets under swsec_<ulid> refs in a 0600 file and removes them per ref and per sentinel", async () => {
    const vault = new SecretVault(home, createRandom(), Date.now);
    const a = await vault.put("snt_a", secretOf(1));
    const b = await vault.put("snt_a", secretOf(2));
    const c = await vault.put("snt_c", secretOf(3));
    expect(a).toMatch(/^swsec_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect((await stat(join(home, VAULT_FILE))).mode & 0o777).toBe(0o600);
    expect(await vault.get(a)).toBe(secretOf(1));
    const fresh = new SecretVault(home, createRandom(), Date.now);
    expect(await fresh.get(b)).toBe(secretOf(2));
    await vault.remove([a]);
    expect(await vault.get(a)).toBeUndefined();
    await vault.removeSentinel("snt_a");
    expect(await vault.get(b)).toBeUndefined();
    expect(await vault.get(c)).toBe(secretOf(3));
    const file = JSON.parse(await readFile(join(home, VAULT_FILE), "utf8"));
    expect(Object.keys(file.secrets)).toEqual([c]);
  });

  it("never quotes a corrupt file's text (which holds secrets) in its error", async () => {
    await writeFile(join(home, VAULT_FILE), `{"secrets": {"swsec_x": {"secret": "${secretOf(9)}"`, { mode: 0o600 });
    const vault = new SecretVault(home, createRandom(), Date.now);
    const err = await vault.get("swsec_x").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/not valid JSON/);
    expect((err as Error).message).not.toContain(secretOf(9).slice(6, 20));
  });
});
