/**
 * `svc completion bash|zsh|fish`: the scripts the real CLI prints, run by the real shells. bash:
 * the function is called with COMP_WORDS/COMP_CWORD as bash would; zsh: `_svc` is called with
 * `words`/`CURRENT`, the completion system's `_describe`/`_files` replaced by functions that print
 * what they were given (driving zsh's line editor needs a terminal); fish: `complete -C`, fish's
 * own query of what it would offer.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../../core/cli/program.js";
import { bashCompletion } from "../../../core/cli/completion/bash.js";
import { completionTree } from "../../../core/cli/completion/tree.js";
import { runCli } from "../../support/cli.js";

const has = (bin: string) => spawnSync(bin, ["--version"], { stdio: "ignore" }).status === 0;
const ZSH = has("zsh");
const FISH = has("fish");

let dir: string;
const scripts: Record<string, string> = {};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-completion-"));
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runCli(["completion", shell], { home: dir });
    expect(r.code, r.stderr).toBe(0);
    scripts[shell] = join(dir, `svc.${shell}`);
    await writeFile(scripts[shell]!, r.stdout);
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const sh = (bin: string, script: string) => {
  const r = spawnSync(bin, ["-c", script], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: dir } });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout.trim();
};

/** What bash's completion offers for the words typed (the last one being completed). */
const bash = (...typed: string[]) =>
  sh(
    "bash",
    `source ${JSON.stringify(scripts.bash)}; COMP_WORDS=(${typed.map((w) => JSON.stringify(w)).join(" ")}); COMP_CWORD=${typed.length - 1}; _svc_completion; echo "\${COMPREPLY[*]}"`,
  ).split(/\s+/);

describe("svc completion bash", () => {
  it("completes verbs, subcommands and a verb's options, walking past options and their values", () => {
    expect(bash("svc", "sen")).toEqual(["sentinel"]);
    expect(bash("svc", "se")).toEqual(["serve", "sentinel", "sessions", "service"]);
    expect(bash("svc", "sentinel", "")).toEqual(
      expect.arrayContaining(["watch", "list", "status", "unwatch", "push", "replay", "providers"]),
    );
    expect(bash("svc", "sentinel", "watch", "--")).toEqual(
      expect.arrayContaining(["--types", "--until", "--session", "--json", "--help"]),
    );
    expect(bash("svc", "--remote", "laptop", "sentinel", "li")).toEqual(["list"]);
    expect(bash("svc", "service", "install", "--")).toEqual(["--name", "--no-start", "--json", "--help"]);
    // The value of --types is not a verb: nothing from the tree (bash falls back to file names).
    expect(bash("svc", "sentinel", "watch", "--types", "")).toEqual([""]);
    expect(bash("svc", "sentinel", "watch", "--types", "pr", "--se")).toEqual(["--session"]);
  });

  it("is the program's own tree: every verb of buildProgram() is offered, and a verb added appears", () => {
    const verbs = buildProgram().commands.map((c) => c.name());
    expect(bash("svc", "")).toEqual(expect.arrayContaining(verbs));
    const program = buildProgram();
    program.command("frobnicate").description("x").option("--level <n>", "y");
    const script = bashCompletion(completionTree(program));
    expect(script).toContain('"svc/frobnicate") at="svc frobnicate"');
    expect(script).toContain('"svc frobnicate/--level"');
  });

  it("walks an alias like its command, and skips hidden commands", () => {
    const program = new Command("svc");
    program.command("sentinel").alias("s").command("list").alias("ls").option("--json", "j");
    program.command("secret", { hidden: true });
    const tree = completionTree(program);
    expect(tree.map((n) => n.path.join(" "))).toEqual(["svc", "svc sentinel", "svc sentinel list"]);
    expect(bashCompletion(tree)).toContain('"svc/s") at="svc sentinel"');
  });

  it("rejects an unknown shell with a usage error naming the allowed ones", async () => {
    const r = await runCli(["completion", "tcsh"], { home: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown shell "tcsh"; allowed: bash, zsh, fish');
  });
});

describe.skipIf(!ZSH)("svc completion zsh", () => {
  const zsh = (...typed: string[]) =>
    sh(
      "zsh",
      [
        'compdef() { print -r -- "compdef $*"; }',
        '_describe() { local -a arr; arr=("${(@P)4}"); print -r -- "$3 ${(j: :)${arr[@]%%:*}}"; }',
        "_files() { print -r -- files; }",
        `source ${JSON.stringify(scripts.zsh)}`,
        `words=(${typed.map((w) => JSON.stringify(w)).join(" ")}); CURRENT=${typed.length}; _svc`,
      ].join("\n"),
    ).split("\n");

  it("registers itself when sourced and completes verbs, subcommands, options and option values", () => {
    expect(zsh("svc", "")[0]).toBe("compdef _svc svc");
    expect(zsh("svc", "")[1]).toMatch(/^command serve .*config .* sentinel .* service completion/);
    expect(zsh("svc", "sentinel", "")[1]).toMatch(/^command watch .*list status/);
    expect(zsh("svc", "sentinel", "watch", "--t")[1]).toMatch(/^option .*--types/);
    expect(zsh("svc", "sentinel", "watch", "--types", "")[1]).toBe("files");
  });
  it("carries each candidate's description", async () => {
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(scripts.zsh!, "utf8")).toContain(
      "'sentinel:Sentinels: watch events and deliver matches to a target'",
    );
  });
});
it.skipIf(ZSH)("svc completion zsh: skipped, zsh is not installed (install it to run this test)", () => {});

describe.skipIf(!FISH)("svc completion fish", () => {
  const fish = (line: string) =>
    sh("fish", `source ${JSON.stringify(scripts.fish)}; complete -C ${JSON.stringify(line)}`)
      .split("\n")
      .map((l) => l.split("\t")[0]);

  it("offers verbs, subcommands and options, with descriptions, as fish itself reports", () => {
    expect(fish("svc sen")).toEqual(["sentinel"]);
    expect(fish("svc sentinel ")).toEqual(expect.arrayContaining(["watch", "list", "push", "replay"]));
    expect(fish("svc sentinel watch --ty")).toEqual(["--types"]);
    expect(fish("svc --remote laptop sentinel li")).toEqual(["list"]);
    expect(sh("fish", `source ${JSON.stringify(scripts.fish)}; complete -C "svc doc"`)).toMatch(/^doctor\t\S/);
  });
});
it.skipIf(FISH)("svc completion fish: skipped, fish is not installed (install it to run this test)", () => {});
