import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setConfigKey, unsetConfigKey } from "../../../core/config/write.js";
import { makeTempHome } from "../../support/cli.js";

describe("setConfigKey / unsetConfigKey", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let file: string;
  beforeEach(async () => {
    home = await makeTempHome();
    file = join(home.home, "config.json");
  });
  afterEach(() => home.cleanup());
  const read = async () => JSON.parse(await readFile(file, "utf8"));

  it("unset on an absent file changes nothing and creates nothing", async () => {
    expect(await unsetConfigKey(file, "daemon.port")).toEqual({ changed: false, warnings: [] });
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it("warns when activeProfile names no profile, and accepts it", async () => {
    const r = await setConfigKey(file, "activeProfile", "work");
    expect(r.warnings.join()).toMatch(/activeProfile "work" names no profile/);
    expect((await setConfigKey(file, "profiles.work", { daemon: { port: 1 } })).warnings).toEqual([]);
  });

  it("model warnings cover a whole models object", async () => {
    const r = await setConfigKey(file, "models", {
      "review.small": "x-1",
      "review.pr": "claude-sonnet-4-5",
      custom: { model: "y-2" },
    });
    expect(r.warnings).toHaveLength(2);
  });

  it("sets per-repo caps under keys with dots and refuses invalid caps", async () => {
    await setConfigKey(file, "worktrees.provisionConcurrencyByRepo.~/src/my.repo", 1);
    expect(await read()).toEqual({ worktrees: { provisionConcurrencyByRepo: { "~/src/my.repo": 1 } } });
    await expect(setConfigKey(file, "worktrees.provisionConcurrencyByRepo.api", "two")).rejects.toThrow(
      /provisionConcurrencyByRepo\.api/,
    );
  });

  it("an existing malformed acpAgents entry does not block other writes, and reports no new warning", async () => {
    await writeFile(file, JSON.stringify({ acpAgents: { old: { name: "no bin" } } }));
    const r = await setConfigKey(file, "spawn.dedupe", "on-request");
    expect(r.warnings).toEqual([]);
    expect(await read()).toEqual({ acpAgents: { old: { name: "no bin" } }, spawn: { dedupe: "on-request" } });
  });

  it("a refused entry names what was found at an array element (as loading does), not nothing", async () => {
    const err = await setConfigKey(file, "acpAgents.x", { bin: "agent", bin_args: ["--ok", 5] }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/key acpAgents\.x\.bin_args\.1: found the number 5, allowed: a string/);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it("unsetting the token while tunnel.e2e is true is refused", async () => {
    await setConfigKey(file, "tunnel", { token: "t", e2e: true });
    const before = await readFile(file, "utf8");
    await expect(unsetConfigKey(file, "tunnel.token")).rejects.toThrow(/requires tunnel\.token/);
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it.each([
    ["extJudge", "sk-ant-SECRET123"],
    ["defaults.adapters.claude.auth", "sk-ant-SECRET456"],
  ])("a refused `set %s <secret>` does not quote the value", async (key, secret) => {
    const err = await setConfigKey(file, key, secret).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/refused to change/);
    expect(err?.message).not.toContain(secret);
  });

  it("a write keeps the file's mode (a hand-set 0600 stays 0600)", async () => {
    await writeFile(file, JSON.stringify({ extJudge: { apiKey: "k" } }), { mode: 0o600 });
    await setConfigKey(file, "daemon.port", 5);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("a new file is created 0600; an existing 0644 one stays 0644 and a secret written to it warns, naming the keys, never the values", async () => {
    await setConfigKey(file, "daemon.port", 5);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await setConfigKey(file, "daemon.authToken", "tok-quiet-1")).warnings).toEqual([]);
    await chmod(file, 0o644);
    const r = await setConfigKey(file, "tunnel.token", "tok-loud-2");
    expect(r.warnings).toEqual([
      `${file} holds daemon.authToken, tunnel.token and is readable by group or others (mode 0644); run chmod 600 ${file}`,
    ]);
    expect((await setConfigKey(file, "daemon.port", 6)).warnings).toEqual([]);
    await unsetConfigKey(file, "daemon.port");
    expect((await stat(file)).mode & 0o777).toBe(0o644);
  });

  it("extJudge.apiKey is written only from private input (the CLI's stdin or --from-file), never from a tool call", async () => {
    await expect(setConfigKey(file, "extJudge.apiKey", "sk-judge-1")).rejects.toThrow(
      /not writable through the config_set tool.*svc config set extJudge\.apiKey/,
    );
    await setConfigKey(file, "extJudge.apiKey", "sk-judge-1", { privateInput: true });
    expect(await read()).toEqual({ extJudge: { apiKey: "sk-judge-1" } });
  });

  it("a top level that is not an object is refused without touching the file", async () => {
    await writeFile(file, "[1,2]");
    await expect(setConfigKey(file, "daemon.port", 1)).rejects.toThrow(/top level must be a JSON object/);
    expect(await readFile(file, "utf8")).toBe("[1,2]");
  });
});
