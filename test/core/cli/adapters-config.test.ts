import { existsSync } from "node:fs";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editAdapters } from "../../../core/cli/adapters/config-adapters.js";
import { runtimeProfilePackage } from "../../../core/cli/adapters/runtime-profile.js";
import { makeTempHome } from "../../support/cli.js";

describe("runtime-profile package name", () => {
  it("--package, else profileAliases[slug], else @svc/runtime-profile-<slug>", () => {
    expect(runtimeProfilePackage("py", "my-py", { py: "aliased-py" })).toBe("my-py");
    expect(runtimeProfilePackage("py", undefined, { py: "aliased-py" })).toBe("aliased-py");
    expect(runtimeProfilePackage("py", undefined, { rust: "x" })).toBe("@svc/runtime-profile-py");
    expect(runtimeProfilePackage("py", undefined, undefined)).toBe("@svc/runtime-profile-py");
  });
});

describe("editing config adapters", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let path: string;
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome());
    path = join(home, "config.json");
  });
  afterEach(() => cleanup());

  it("creates config.json lazily with only the adapters key", async () => {
    expect(await editAdapters(path, (ids) => [...ids, "a"])).toEqual(["a"]);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ adapters: ["a"] });
  });

  it("creates config.json 0600 and keeps an existing file's mode", async () => {
    await editAdapters(path, (ids) => [...ids, "a"]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await chmod(path, 0o640);
    await editAdapters(path, (ids) => [...ids, "b"]);
    expect((await stat(path)).mode & 0o777).toBe(0o640);
  });

  it("does not create the file when nothing changes", async () => {
    expect(await editAdapters(path, (ids) => ids)).toEqual([]);
    expect(existsSync(path)).toBe(false);
  });

  it("edits the raw tree: unknown keys, key order and absent defaults stay as written", async () => {
    const raw = { future: { x: [1, 2] }, adapters: ["a"], daemon: { port: 1234 } };
    await writeFile(path, JSON.stringify(raw));
    await editAdapters(path, (ids) => [...ids, "b"]);
    const text = await readFile(path, "utf8");
    expect(JSON.parse(text)).toEqual({ ...raw, adapters: ["a", "b"] });
    expect(Object.keys(JSON.parse(text))).toEqual(["future", "adapters", "daemon"]);
    expect(text).not.toContain("18790");
  });

  it("refuses to touch an invalid config.json, naming the problem", async () => {
    await writeFile(path, JSON.stringify({ adapters: "not-a-list" }));
    await expect(editAdapters(path, (ids) => [...ids, "a"])).rejects.toMatchObject({ code: "config_invalid" });
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ adapters: "not-a-list" });
  });

  it("parallel edits from one process are all kept (the file lock serialises them)", async () => {
    await Promise.all(["a", "b", "c", "d"].map((id) => editAdapters(path, (ids) => [...ids, id])));
    expect(JSON.parse(await readFile(path, "utf8")).adapters.sort()).toEqual(["a", "b", "c", "d"]);
  });
});
