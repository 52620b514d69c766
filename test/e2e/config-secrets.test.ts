/**
 * Secrets in config.json (issue 24): `svc config set` takes a secret from stdin, a prompt without
 * echo or `--from-file`, never from its command line, which `ps` shows to every user; config.json
 * is created 0600, keeps an existing file's mode, and a file holding secrets that others can read
 * is told by `svc doctor` and `svc config show`. Real CLI processes on a temporary SVC_HOME.
 */
import { randomBytes } from "node:crypto";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCliHomes, expectSecretOffEveryCommandLine, finished, startCli } from "../support/command-lines.js";
import { answerPromptsOnTerminal, hasScript } from "../support/terminal.js";

const secret = (prefix: string) => `${prefix}-${randomBytes(12).toString("hex")}`;
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const useHome = useCliHomes("svc-config-secrets-");

describe.concurrent("svc config set of a secret (real CLI)", () => {
  it("reads the secret from stdin: while the CLI runs, no process's command line (ps, /proc) holds it; then it is stored", async () => {
    const { home, file, readConfig } = await useHome();
    const token = secret("tok-stdin");
    const child = startCli(home, ["config", "set", "daemon.authToken"]);
    const done = finished(child);
    child.stdin.write(token + "\n");
    // stdin stays open: the CLI is still waiting for the rest of the value while we look.
    expect(await expectSecretOffEveryCommandLine(child, token)).toContain("config set daemon.authToken");
    expect(await exists(file)).toBe(false);
    child.stdin.end();
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("set daemon.authToken");
    expect(r.stdout + r.stderr).not.toContain(token);
    expect(await readConfig()).toEqual({ daemon: { authToken: token } });
    expect(await modeOf(file)).toBe(0o600);
  });

  it.each([
    ["daemon.authToken", "daemon.authToken is a secret"],
    ["tunnel.token", "tunnel.token is a secret"],
    ["extJudge.apiKey", "extJudge.apiKey is a secret"],
    ["profiles.work.tunnel.token", "profiles.work.tunnel.token is a secret"],
    ["acpAgents.mine.env.ANTHROPIC_API_KEY", "acpAgents.mine.env.ANTHROPIC_API_KEY is a secret"],
  ])(
    "refuses %s on the command line (exit 2), naming stdin and --from-file; the file is unchanged",
    async (key, what) => {
      const { svc, file } = await useHome();
      const original =
        '{\n  "daemon": { "port": 18800 },\n  "acpAgents": { "mine": { "bin": "agent" } },\n  "keep": "me"\n}\n';
      await writeFile(file, original);
      const value = secret("sk-argv");
      const r = await svc(["config", "set", key, value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `${what}: it is not taken on the command line, where ps shows it to every user; pipe it on stdin (svc config set ${key} < file) or use --from-file <path>`,
      );
      expect(r.stdout + r.stderr).not.toContain(value);
      expect(await readFile(file, "utf8")).toBe(original);
    },
  );

  it("refuses a section whose value holds a secret on the command line, naming the secret; the same value on stdin is taken", async () => {
    const { svc, file, readConfig } = await useHome();
    const token = secret("tok-section");
    const value = JSON.stringify({ host: "wss://relay.example/t", token });
    const argv = await svc(["config", "set", "tunnel", value]);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toMatch(
      /the value for tunnel holds tunnel\.token, a secret: it is not taken on the command line.*stdin.*--from-file/,
    );
    expect(argv.stdout + argv.stderr).not.toContain(token);
    expect(await exists(file)).toBe(false);
    const piped = await svc(["config", "set", "tunnel"], value + "\n");
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(token);
    expect((await readConfig()).tunnel).toEqual({ host: "wss://relay.example/t", token });
    // A section without a secret is still taken on the command line.
    expect((await svc(["config", "set", "tunnel", '{"host":"wss://relay.example/u"}'])).code).toBe(0);
  });

  it("--from-file reads the value (trailing newline dropped, a secret stays a string); empty, missing or doubled input is refused", async () => {
    const { home, svc, file, readConfig } = await useHome();
    const keyFile = join(home, "judge.key");
    const apiKey = secret("sk-file");
    await writeFile(keyFile, apiKey + "\r\n", { mode: 0o600 });
    const r = await svc(["config", "set", "extJudge.apiKey", "--from-file", keyFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    expect(await readConfig()).toEqual({ extJudge: { apiKey } });
    await writeFile(keyFile, "12345678\n");
    expect((await svc(["config", "set", "tunnel.token", "--from-file", keyFile])).code).toBe(0);
    expect((await readConfig()).tunnel).toEqual({ token: "12345678" });
    const before = await readFile(file, "utf8");
    await writeFile(keyFile, "\n");
    const empty = await svc(["config", "set", "daemon.authToken", "--from-file", keyFile]);
    expect([empty.code, empty.stderr]).toEqual([
      2,
      expect.stringContaining(
        `daemon.authToken: the value read from the file ${keyFile} is empty; nothing was written`,
      ),
    ]);
    const missing = await svc(["config", "set", "daemon.authToken", "--from-file", join(home, "absent")]);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringContaining(`--from-file ${join(home, "absent")}: no such file`),
    ]);
    const emptyStdin = await svc(["config", "set", "daemon.authToken"], "\n");
    expect([emptyStdin.code, emptyStdin.stderr]).toEqual([
      2,
      expect.stringContaining("daemon.authToken: the value read from stdin is empty"),
    ]);
    const both = await svc(["config", "set", "daemon.port", "1", "--from-file", keyFile]);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("not both")]);
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it.skipIf(!hasScript)("on a terminal it prompts without echoing what is typed", async () => {
    const { home, readConfig } = await useHome();
    const token = secret("tok-tty");
    const r = await answerPromptsOnTerminal(
      home,
      ["config", "set", "daemon.authToken"],
      [["daemon.authToken (input hidden): ", token]],
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("set daemon.authToken");
    expect(r.stdout + r.stderr).not.toContain(token);
    expect(await readConfig()).toEqual({ daemon: { authToken: token } });
  });
});

describe.concurrent("config.json's mode (real CLI)", () => {
  it("a config.json svc creates is 0600, whatever key created it", async () => {
    const { svc, file } = await useHome();
    const r = await svc(["config", "set", "daemon.port", "19000"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await modeOf(file)).toBe(0o600);
  });

  it("an existing 0644 file holding a secret: kept 0644 by a write, told by svc doctor and config show; after chmod 600 neither tells", async () => {
    const { svc, file } = await useHome();
    const token = secret("tok-open");
    await writeFile(file, JSON.stringify({ daemon: { authToken: token } }));
    await chmod(file, 0o644);
    const set = await svc(["config", "set", "daemon.port", "19001"]);
    expect(set.code, set.stderr).toBe(0);
    expect(await modeOf(file)).toBe(0o644);
    const doctor = await svc(["doctor", "--json"]);
    const report = JSON.parse(doctor.stdout) as {
      healthy: boolean;
      findings: Array<{ severity: string; file: string; message: string; fix: string }>;
    };
    expect(report.findings.filter((f) => f.file === "config.json")).toEqual([
      {
        severity: "warn",
        file: "config.json",
        message: "it holds daemon.authToken and is readable by group or others (mode 0644)",
        fix: `chmod 600 ${JSON.stringify(file)}; if others could read it, treat those secrets as exposed and rotate them`,
      },
    ]);
    const human = await svc(["doctor"]);
    expect(human.stdout).toContain(`chmod 600 ${JSON.stringify(file)}`);
    const show = await svc(["config", "show"]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).toContain(
      `${file} holds daemon.authToken and is readable by group or others (mode 0644); run chmod 600 ${file}`,
    );
    for (const out of [doctor, human, show]) expect(out.stdout + out.stderr).not.toContain(token);
    await chmod(file, 0o600);
    expect((await svc(["config", "show"])).stderr).toBe("");
    expect(
      JSON.parse((await svc(["doctor", "--json"])).stdout).findings.filter(
        (f: { file: string }) => f.file === "config.json",
      ),
    ).toEqual([]);
  });

  it("an existing 0600 file stays 0600 through set, a secret from stdin, and unset", async () => {
    const { svc, file } = await useHome();
    await writeFile(file, "{}\n", { mode: 0o600 });
    await chmod(file, 0o600);
    expect((await svc(["config", "set", "daemon.port", "19002"])).code).toBe(0);
    expect((await svc(["config", "set", "tunnel.token"], secret("tok-kept") + "\n")).code).toBe(0);
    expect((await svc(["config", "unset", "daemon.port"])).code).toBe(0);
    expect(await modeOf(file)).toBe(0o600);
  });
});
