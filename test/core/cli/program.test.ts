import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../../core/cli/program.js";
import { makeTempHome, runCli } from "../../support/cli.js";

function allCommands(cmd: Command, path: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return cmd.commands.flatMap((c) => [{ path: [...path, c.name()], cmd: c }, ...allCommands(c, [...path, c.name()])]);
}

describe("the svc program", () => {
  it("gives every verb a description and --help", () => {
    const program = buildProgram();
    const commands = allCommands(program).filter(({ cmd }) => cmd.name() !== "help");
    expect(commands.length).toBeGreaterThan(0);
    for (const { path, cmd } of commands) {
      expect(cmd.description(), `svc ${path.join(" ")} has no description`).not.toBe("");
      expect(cmd.helpInformation()).toContain("--help");
    }
  });

  it("gives listing verbs --json", () => {
    for (const { path, cmd } of allCommands(buildProgram())) {
      if (cmd.name() === "ls" || cmd.name() === "list") {
        expect(
          cmd.options.map((o) => o.long),
          `svc ${path.join(" ")}`,
        ).toContain("--json");
      }
    }
  });
});

describe("exit codes of the real binary", () => {
  it("0 for --version and --help, 2 for usage errors", async () => {
    const { home, cleanup } = await makeTempHome();
    try {
      const version = await runCli(["--version"], { home });
      expect(version).toMatchObject({ code: 0, stdout: "0.20.0\n" });
      expect((await runCli(["--help"], { home })).code).toBe(0);
      expect((await runCli(["serve", "--help"], { home })).code).toBe(0);
      const unknown = await runCli(["no-such-verb"], { home });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("unknown command");
      expect((await runCli(["serve", "--no-such-flag"], { home })).code).toBe(2);
    } finally {
      await cleanup();
    }
  });

  it("prints no colour escapes when NO_COLOR is set", async () => {
    const { home, cleanup } = await makeTempHome();
    try {
      const res = await runCli(["serve", "--port", "x"], { home, env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
      expect(res.stderr).not.toMatch(/\u001b\[/);
    } finally {
      await cleanup();
    }
  });
});
