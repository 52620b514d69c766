import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SvcError } from "../../../../core/errors.js";
import { loadTeamKey, writeKeyFile } from "../../../../core/store/postgres/secret-key.js";
import { makeTempHome } from "../../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ home, cleanup } = await makeTempHome("svc-team-key-")));
afterAll(() => cleanup());

const failure = async (p: Promise<unknown>): Promise<SvcError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(SvcError.is(err), String(err)).toBe(true);
  return err as SvcError;
};

describe("the team key", () => {
  const key = randomBytes(32);

  it("comes from SVC_STORE_KEY (base64 or base64url of 32 bytes), before any key file", async () => {
    for (const text of [key.toString("base64"), key.toString("base64url"), `  ${key.toString("base64")}\n`])
      expect(await loadTeamKey({ env: { SVC_STORE_KEY: text }, home, keyFile: "/nonexistent" })).toEqual(key);
  });

  it.each([
    [randomBytes(16).toString("base64"), /holds 16 bytes, but the team key is exactly 32 bytes/],
    [randomBytes(33).toString("base64"), /holds 33 bytes/],
    ["not base64 at all!", /is not base64/],
    ["", /none is set/],
  ])("refuses SVC_STORE_KEY=%j with store_key_missing, never quoting it", async (text, why) => {
    const err = await failure(loadTeamKey({ env: { SVC_STORE_KEY: text }, home }));
    expect(err.code).toBe("store_key_missing");
    expect(err.message).toMatch(why);
    expect(err.message).toContain("svc store keygen");
    if (text) expect(err.message).not.toContain(text.trim());
  });

  it("says how to make one when none is set", async () => {
    const err = await failure(loadTeamKey({ env: {}, home }));
    expect(err.code).toBe("store_key_missing");
    expect(err.message).toMatch(/svc store keygen <file>.*store\.keyFile.*SVC_STORE_KEY/);
  });

  it("reads a key file of mode 0600 or 0400, a relative path under $SVC_HOME", async () => {
    await writeFile(join(home, "k600"), `${key.toString("base64")}\n`, { mode: 0o600 });
    expect(await loadTeamKey({ env: {}, home, keyFile: "k600" })).toEqual(key);
    await writeFile(join(home, "k400"), key.toString("base64"), { mode: 0o600 });
    await chmod(join(home, "k400"), 0o400);
    expect(await loadTeamKey({ env: {}, home, keyFile: join(home, "k400") })).toEqual(key);
  });

  it.each([0o644, 0o640, 0o604, 0o660, 0o666])(
    "refuses a key file of mode 0%o, naming it and its mode",
    async (mode) => {
      const path = join(home, `k${mode.toString(8)}`);
      await writeFile(path, key.toString("base64"), { mode: 0o600 });
      await chmod(path, mode);
      const err = await failure(loadTeamKey({ env: {}, home, keyFile: path, keyFileFrom: "env SVC_STORE_KEY_FILE" }));
      expect(err.code).toBe("store_key_missing");
      expect(err.message).toContain(`the team key file ${path} (env SVC_STORE_KEY_FILE) has mode 0${mode.toString(8)}`);
      expect(err.message).toContain("0600 or stricter");
      expect(err.message).not.toContain(key.toString("base64"));
    },
  );

  it("refuses a key file that is missing, a directory, or of the wrong length", async () => {
    expect((await failure(loadTeamKey({ env: {}, home, keyFile: "absent" }))).message).toContain(
      `${join(home, "absent")} (config.json store.keyFile) does not exist`,
    );
    await mkdir(join(home, "dir"), { mode: 0o700 });
    expect((await failure(loadTeamKey({ env: {}, home, keyFile: "dir" }))).message).toMatch(/is not a file/);
    await writeFile(join(home, "short"), randomBytes(31).toString("base64"), { mode: 0o600 });
    expect((await failure(loadTeamKey({ env: {}, home, keyFile: "short" }))).message).toMatch(/holds 31 bytes/);
  });

  it("svc store keygen's writer makes a fresh 0600 key file, and never overwrites one", async () => {
    const path = join(home, "team.key");
    await writeKeyFile(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const first = await loadTeamKey({ env: {}, home, keyFile: path });
    expect(first.length).toBe(32);
    const err = await failure(writeKeyFile(path));
    expect(err.code).toBe("conflict");
    expect(err.message).toContain("already exists");
    expect(await loadTeamKey({ env: {}, home, keyFile: path })).toEqual(first);
    await writeKeyFile(join(home, "other.key"));
    expect(await readFile(join(home, "other.key"), "utf8")).not.toBe(await readFile(path, "utf8"));
  });
});
