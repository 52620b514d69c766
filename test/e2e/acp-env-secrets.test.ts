/**
 * `svc acp add --env` (issue 24): a secret-named variable (`ANTHROPIC_API_KEY`, the config's
 * secret rule) is never taken as `KEY=VALUE` on the command line, which `ps` shows to every user;
 * `--env KEY` reads its value from stdin and `--env-from-file` from a file. Real CLI processes on a
 * temporary SVC_HOME.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCliHomes, expectSecretOffEveryCommandLine, finished, startCli } from "../support/command-lines.js";
import { answerPromptsOnTerminal, hasScript } from "../support/terminal.js";

const apiKey = () => `sk-ant-${randomBytes(16).toString("hex")}`;
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const useHome = useCliHomes("svc-acp-env-");

describe.concurrent("svc acp add --env with a secret (real CLI)", () => {
  it("--env ANTHROPIC_API_KEY reads the value from stdin: no process's command line (ps, /proc) holds it; then it is stored 0600", async () => {
    const { home, file, readConfig } = await useHome();
    const key = apiKey();
    const child = startCli(home, [
      "acp",
      "add",
      "claude",
      "--bin",
      "claude-agent-acp",
      "--env",
      "ANTHROPIC_API_KEY",
      "--env",
      "LOG_LEVEL=debug",
    ]);
    const done = finished(child);
    child.stdin.write(key + "\n");
    // stdin stays open: the CLI is still reading the value while we look.
    expect(await expectSecretOffEveryCommandLine(child, key)).toContain("acp add claude");
    expect(await exists(file)).toBe(false);
    child.stdin.end();
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(await readConfig()).toEqual({
      acpAgents: { claude: { bin: "claude-agent-acp", env: { LOG_LEVEL: "debug", ANTHROPIC_API_KEY: key } } },
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it.each(["ANTHROPIC_API_KEY", "GH_TOKEN", "db_password"])(
    "refuses --env %s=… on the command line (exit 2), naming the safe ways; config.json is unchanged",
    async (name) => {
      const { svc, file } = await useHome();
      const original = '{\n  "acpAgents": { "mine": { "bin": "agent" } },\n  "keep": "me"\n}\n';
      await writeFile(file, original);
      const key = apiKey();
      const r = await svc([
        "acp",
        "add",
        "mine",
        "--bin",
        "other",
        "--env",
        "LOG_LEVEL=debug",
        "--env",
        `${name}=${key}`,
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `--env ${name}=…: ${name} is a secret (by its name): it is not taken on the command line, where ps shows it to every user; ` +
          `give --env ${name} without a value and pipe the value on stdin (or type it at the prompt), or use --env-from-file <path> with a ${name}=… line. Nothing was written`,
      );
      expect(r.stdout + r.stderr).not.toContain(key);
      expect(await readFile(file, "utf8")).toBe(original);
    },
  );

  it("a non-secret --env KEY=VALUE is still taken; --env-from-file adds KEY=VALUE lines (comments skipped, value verbatim) and --env wins over it", async () => {
    const { home, svc, readConfig } = await useHome();
    const key = apiKey();
    const envFromFile = join(home, "agent.env");
    await writeFile(
      envFromFile,
      `# the agent's environment\n\nANTHROPIC_API_KEY=${key}\r\nLOG_LEVEL=info\nQUOTED="a b"\nEMPTY=\n`,
      { mode: 0o600 },
    );
    const r = await svc([
      "acp",
      "add",
      "mine",
      "--bin",
      "agent",
      "--env",
      "LOG_LEVEL=debug",
      "--env",
      "MODE=x=y",
      "--env-from-file",
      envFromFile,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect((await readConfig()).acpAgents.mine.env).toEqual({
      ANTHROPIC_API_KEY: key,
      LOG_LEVEL: "debug",
      MODE: "x=y",
      QUOTED: '"a b"',
      EMPTY: "",
    });
  });

  it("refuses, with nothing written: a bad --env-from-file line (named by number, never quoted), a missing file, an empty value on stdin, two bare keys on piped stdin, a bad name, a pasted value (not repeated)", async () => {
    const { home, svc, file } = await useHome();
    const key = apiKey();
    const envFromFile = join(home, "bad.env");
    await writeFile(envFromFile, `LOG_LEVEL=info\nexport ANTHROPIC_API_KEY ${key}\n`);
    const cases: Array<[string[], string, string]> = [
      [
        ["--env-from-file", envFromFile],
        "",
        `--env-from-file ${envFromFile} line 2: expected KEY=VALUE with KEY of letters, digits and _, not starting with a digit`,
      ],
      [["--env-from-file", join(home, "absent.env")], "", `--env-from-file ${join(home, "absent.env")}: no such file`],
      [
        ["--env", "ANTHROPIC_API_KEY"],
        "\n",
        "ANTHROPIC_API_KEY: the value read from stdin is empty; nothing was written",
      ],
      [
        ["--env", "ANTHROPIC_API_KEY", "--env", "GH_TOKEN"],
        `${key}\n`,
        "--env ANTHROPIC_API_KEY, --env GH_TOKEN: only one --env KEY can take its value from stdin; put the others in --env-from-file <path>",
      ],
      [
        ["--env", "1BAD=x"],
        "",
        '--env expects KEY=VALUE or KEY (KEY of letters, digits and _, not starting with a digit), got the name "1BAD"',
      ],
      [
        ["--env", key],
        "",
        "--env expects KEY=VALUE or KEY (KEY of letters, digits and _, not starting with a digit), got an argument without = that is not a name (not shown: it may be a value)",
      ],
    ];
    for (const [flags, input, message] of cases) {
      const r = await svc(["acp", "add", "mine", "--bin", "agent", ...flags], input);
      expect([r.code, r.stderr], flags.join(" ")).toEqual([2, expect.stringContaining(message)]);
      expect(r.stdout + r.stderr).not.toContain(key);
    }
    expect(await exists(file)).toBe(false);
  });

  it.skipIf(!hasScript)("on a terminal each bare --env KEY is asked for at a prompt that does not echo", async () => {
    const { home, readConfig } = await useHome();
    const [key, token] = [apiKey(), `ghp_${randomBytes(12).toString("hex")}`];
    const r = await answerPromptsOnTerminal(
      home,
      ["acp", "add", "mine", "--bin", "agent", "--env", "ANTHROPIC_API_KEY", "--env", "GH_TOKEN"],
      [
        ["ANTHROPIC_API_KEY (input hidden): ", key],
        ["GH_TOKEN (input hidden): ", token],
      ],
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("added acpAgents.mine (agent)");
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(token);
    expect((await readConfig()).acpAgents.mine.env).toEqual({ ANTHROPIC_API_KEY: key, GH_TOKEN: token });
  });
});
