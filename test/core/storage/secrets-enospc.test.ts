import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskFullError } from "../../../core/errors.js";
import { createRandom } from "../../../core/runtime/clock.js";
import { FileCredentialStore } from "../../../core/storage/credentials.js";
import { SecretVault } from "../../../plugins/webhook-target/vault.js";
import { makeTempHome } from "../../support/cli.js";
import { atEveryWrite, installEnospc, type Enospc } from "../../support/enospc.js";

/**
 * ENOSPC injected at every write of the two secret stores (the webhook secret vault and
 * credentials.json), the disk staying full from there: each failure names its file and says the
 * disk is full, never quotes a secret; once space is freed the file loads with every acknowledged
 * change, and nothing of a failed one.
 */
describe("a full disk at every write of the secret stores", () => {
  let fault: Enospc;
  beforeAll(async () => (fault = await installEnospc()));
  afterAll(() => fault.restore());

  const secret = (i: number) => `whsec_${Buffer.alloc(24, i).toString("base64")}`;

  it("sentinels-secrets.json keeps every acknowledged put and removal", async () => {
    const writes = await atEveryWrite(
      fault,
      () => makeTempHome("svc-vault-enospc-", { inMemory: true }),
      async (home, arm) => {
        const vault = new SecretVault(home, createRandom(), Date.now);
        await vault.put("snt_seed", secret(0));
        arm();
        const errors: unknown[] = [];
        const put = new Map<string, string>();
        for (let i = 1; i <= 4; i++) {
          await vault.put(`snt_${i}`, secret(i)).then(
            (ref) => put.set(ref, secret(i)),
            (e: unknown) => errors.push(e),
          );
        }
        let removed: string | undefined;
        const first = [...put.keys()][0];
        if (first)
          await vault.remove([first]).then(
            () => (removed = first),
            (e: unknown) => errors.push(e),
          );
        return { errors, put, removed };
      },
      async (home, { errors, put, removed }, k) => {
        expect(errors.length, `write ${k} failed`).toBeGreaterThan(0);
        for (const err of errors) {
          expect(diskFullError(err)?.message, `write ${k}: ${String(err)}`).toMatch(
            /^the disk is full \(ENOSPC writing sentinels-secrets\.json\)/,
          );
          for (let i = 0; i <= 4; i++) expect(String(err)).not.toContain(secret(i));
        }
        const again = new SecretVault(home, createRandom(), Date.now);
        for (const [ref, value] of put)
          expect(await again.get(ref), `write ${k}: ${ref}`).toBe(ref === removed ? undefined : value);
      },
    );
    expect(writes).toBeGreaterThan(3);
  });

  it("credentials.json keeps every acknowledged set and delete", async () => {
    const writes = await atEveryWrite(
      fault,
      () => makeTempHome("svc-creds-enospc-", { inMemory: true }),
      async (home, arm) => {
        const store = new FileCredentialStore(home);
        await store.set("seed", "token", secret(0));
        arm();
        const errors: unknown[] = [];
        const set = new Map<string, string>();
        for (let i = 1; i <= 4; i++)
          await store.set("ns", `k${i}`, secret(i)).then(
            () => set.set(`k${i}`, secret(i)),
            (e: unknown) => errors.push(e),
          );
        let deleted = false;
        if (set.has("k1"))
          await store.delete("ns", "k1").then(
            () => (deleted = true),
            (e: unknown) => errors.push(e),
          );
        return { errors, set, deleted };
      },
      async (home, { errors, set, deleted }, k) => {
        expect(errors.length, `write ${k} failed`).toBeGreaterThan(0);
        for (const err of errors) {
          expect(diskFullError(err)?.message, `write ${k}: ${String(err)}`).toMatch(
            /^the disk is full \(ENOSPC writing credentials\.json\)/,
          );
          for (let i = 0; i <= 4; i++) expect(String(err)).not.toContain(secret(i));
        }
        const again = new FileCredentialStore(home);
        expect(await again.get("seed", "token")).toBe(secret(0));
        for (const [key, value] of set)
          expect(await again.get("ns", key), `write ${k}: ${key}`).toBe(key === "k1" && deleted ? undefined : value);
      },
    );
    expect(writes).toBeGreaterThan(3);
  });
});
