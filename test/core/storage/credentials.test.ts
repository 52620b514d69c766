import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileCredentialStore } from "../../../core/storage/credentials.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-creds-")));
afterEach(() => cleanup());

describe("credentials store", () => {
  it("creates credentials.json with mode 0600 and round-trips values", async () => {
    const s = new FileCredentialStore(home);
    expect(await s.get("local-gh", "token")).toBeUndefined();
    await s.set("local-gh", "token", "ghp_secret");
    await s.set("webhook", "secret", "s2");
    expect((await stat(join(home, "credentials.json"))).mode & 0o777).toBe(0o600);
    expect(await s.get("local-gh", "token")).toBe("ghp_secret");
    expect(await new FileCredentialStore(home).has("webhook", "secret")).toBe(true);
    await s.delete("local-gh", "token");
    expect(await s.has("local-gh", "token")).toBe(false);
    expect(await s.get("webhook", "secret")).toBe("s2");
    expect((await stat(join(home, "credentials.json"))).mode & 0o777).toBe(0o600);
  });

  it("keeps unknown keys of the file and rejects bad names without echoing the value", async () => {
    await writeFile(join(home, "credentials.json"), JSON.stringify({ tunnel: { token: "t" } }), { mode: 0o600 });
    const s = new FileCredentialStore(home);
    await s.set("a", "b", "c");
    expect(JSON.parse(await readFile(join(home, "credentials.json"), "utf8"))).toMatchObject({
      tunnel: { token: "t" },
      values: { a: { b: "c" } },
    });
    const err = await s.set("bad ns", "k", "v4lue-secret").catch((e) => e);
    expect(err.code).toBe("invalid_input");
    expect(err.message).not.toContain("v4lue-secret");
    await expect(s.set("a", "b", "")).rejects.toMatchObject({ code: "invalid_input" });
  });

  it("survives parallel writers (lock): every value lands", async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => new FileCredentialStore(home).set("ns", `k${i}`, `v${i}`)));
    const s = new FileCredentialStore(home);
    for (let i = 0; i < 10; i++) expect(await s.get("ns", `k${i}`)).toBe(`v${i}`);
  });
});
