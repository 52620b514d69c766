import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { provenanceFooter, type Provenance } from "../../../core/workspaces/gh-footer.js";
import { removeShimDir, writeShimDir } from "../../../core/workspaces/shim-dir.js";
import { FIXTURES } from "../../support/paths.js";
import { until } from "../sessions/harness.js";
import { AGENTS, makeRepo, makeWsHarness, tempDir, type WsHarness } from "./support.js";

const FAKE_GH_DIR = join(FIXTURES, "fake-gh-recorder");
const PROV: Provenance = { sessionId: "ses_01TEST", adapter: "claude", model: "opus-x", workspace: "/w/app/feat" };
const FOOTER = provenanceFooter(PROV);

async function shim(): Promise<{
  dir: string;
  log: string;
  run(
    args: string[],
    opts?: { input?: string; env?: Record<string, string>; path?: string },
  ): { code: number | null; stderr: string };
}> {
  const home = await tempDir();
  const dir = await writeShimDir(home, PROV);
  const log = join(home, "gh.log");
  return {
    dir,
    log,
    run: (args, opts = {}) => {
      const r = spawnSync(join(dir, "gh"), args, {
        input: opts.input ?? "",
        encoding: "utf8",
        env: {
          PATH: opts.path ?? `${dir}:${FAKE_GH_DIR}:${process.env.PATH}`,
          HOME: process.env.HOME,
          FAKE_GH_LOG: log,
          ...opts.env,
        },
      });
      return { code: r.status, stderr: r.stderr };
    },
  };
}

async function calls(
  log: string,
): Promise<Array<{ args: string[]; files?: Record<string, string>; editorResult?: string }>> {
  return (await readFile(log, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("the gh provenance shim (a fake gh records its arguments)", () => {
  it("--body, -b and --body=: the footer is appended to the body; other arguments are untouched", async () => {
    const s = await shim();
    expect(s.run(["pr", "create", "--title", "T", "--body", "Fixes it."]).code).toBe(0);
    expect(s.run(["pr", "create", "-b", "Short", "--draft"]).code).toBe(0);
    expect(s.run(["pr", "new", "--body=Inline"]).code).toBe(0);
    const [a, b, c] = await calls(s.log);
    expect(a!.args).toEqual(["pr", "create", "--title", "T", "--body", "Fixes it." + FOOTER]);
    expect(b!.args).toEqual(["pr", "create", "-b", "Short" + FOOTER, "--draft"]);
    expect(c!.args).toEqual(["pr", "new", "--body=Inline" + FOOTER]);
    expect(FOOTER).toContain("session `ses_01TEST` · adapter `claude` · model `opus-x` · workspace `/w/app/feat`");
  });

  it("--body-file <file>: gh reads a stamped copy; the user's file is left as it was", async () => {
    const s = await shim();
    const file = join(await tempDir(), "body.md");
    await writeFile(file, "From a file\n");
    expect(s.run(["pr", "create", "--title", "T", "--body-file", file]).code).toBe(0);
    const [a] = await calls(s.log);
    expect(a!.files).toEqual({ 5: "From a file" + FOOTER });
    expect(await readFile(file, "utf8")).toBe("From a file\n");
    expect(a!.args[4]).not.toBe(file);
    expect(existsSync(a!.args[4]!)).toBe(false);
  });

  it("-F - (stdin): the body read from stdin reaches gh stamped", async () => {
    const s = await shim();
    expect(s.run(["pr", "create", "-F", "-"], { input: "Piped body\n" }).code).toBe(0);
    expect((await calls(s.log))[0]!.files).toEqual({ 3: "Piped body" + FOOTER });
  });

  it("every form of the body is stamped, and nothing else: not a title or flag value that looks like -b/-F, not an argument", async () => {
    const s = await shim();
    const file = join(await tempDir(), "body.md");
    await writeFile(file, "From a file\n");
    const EDIT = provenanceFooter(PROV, "edit");
    // [argv, index of the one argument that changes, its expected text (for a file: the part before the path)]
    const argForms: Array<[string[], number, string]> = [
      [["pr", "create", "--title", "-b", "-b", "Body"], 5, "Body" + FOOTER],
      [["pr", "create", "-t", "--body", "-bBody"], 4, "-bBody" + FOOTER],
      [["pr", "create", "--title", "--body", "--body", "Body"], 5, "Body" + FOOTER],
      [["pr", "create", "-t", "-b", "--body=Body"], 4, "--body=Body" + FOOTER],
      [["pr", "create", "-t", "T", "-b=Body"], 4, "-b=Body" + FOOTER],
      [["pr", "create", "-dbBody", "-t", "-F"], 2, "-dbBody" + FOOTER],
      [["pr", "create", "-l", "--body", "-b", "A", "--body", "B"], 7, "B" + FOOTER],
      [["pr", "-R", "o/r", "create", "-t", "T", "-b", "Body"], 7, "Body" + FOOTER],
      [["pr", "edit", "12", "--title", "-b", "--body", "Body"], 6, "Body" + EDIT],
      [["pr", "edit", "-b", "Body", "--", "-b"], 3, "Body" + EDIT],
    ];
    const fileForms: Array<[string[], number, string, string?]> = [
      [["pr", "create", "-t", "-F", "-F", file], 5, ""],
      [["pr", "create", "-t", "T", `-F${file}`], 4, "-F"],
      [["pr", "create", "-t", "T", "--body-file", file], 5, ""],
      [["pr", "create", "-t", "T", `--body-file=${file}`], 4, "--body-file="],
      [["pr", "create", "-t", "T", "--body", "not used: gh reads the file", "-F", file], 7, ""],
      [["pr", "create", "-t", "T", "-F", "-"], 5, "", "From a file\n"],
      [["pr", "create", "-t", "T", "--body-file", "-"], 5, "", "From a file\n"],
      [["pr", "create", "-t", "T", "-F-"], 4, "-F", "From a file\n"],
      [["pr", "create", "-t", "T", "--body-file=-"], 4, "--body-file=", "From a file\n"],
      [["pr", "create", "-t", "T", `-dF${file}`], 4, "-dF"],
      [["pr", "edit", "7", "-F", file], 4, ""],
    ];
    for (const [args] of argForms) expect(s.run(args).code).toBe(0);
    for (const [args, , , input] of fileForms) expect(s.run(args, { input }).code).toBe(0);
    const log = await calls(s.log);
    argForms.forEach(([args, i, stamped], n) => {
      expect(log[n]!.args, args.join(" ")).toEqual(args.map((a, k) => (k === i ? stamped : a)));
      expect(log[n]!.editorResult).toBeUndefined();
    });
    fileForms.forEach(([args, i, prefix], n) => {
      const call = log[argForms.length + n]!;
      expect(
        call.args.filter((_, k) => k !== i),
        args.join(" "),
      ).toEqual(args.filter((_, k) => k !== i));
      expect(call.args[i]!.startsWith(prefix + join(s.dir, "body-")), args.join(" ")).toBe(true);
      expect(call.files, args.join(" ")).toEqual({ [i]: "From a file" + (args[1] === "edit" ? EDIT : FOOTER) });
      expect(existsSync(call.args[i]!.slice(prefix.length))).toBe(false);
    });
    expect(await readFile(file, "utf8")).toBe("From a file\n");
  });

  it("a body it cannot stamp safely, or a command line gh refuses, goes to gh unchanged, and the shim says so on stderr", async () => {
    const s = await shim();
    const unsafe = ["pr", "create", "-t", "T", "-b="]; // the body "=": "-b=" and anything more reads as -b=VALUE
    const refused = ["pr", "create", "-t", "T", "--bogus", "-b", "secret-body"];
    const r1 = s.run(unsafe);
    const r2 = s.run(refused);
    expect([r1.code, r2.code]).toEqual([0, 0]);
    expect((await calls(s.log)).map((c) => c.args)).toEqual([unsafe, refused]);
    expect(r1.stderr).toBe(
      "svc gh shim: the pull request body is not stamped (gh would read the stamped command line differently; the body's form cannot hold a changed value); gh runs with the arguments as given\n",
    );
    expect(r2.stderr).toBe(
      "svc gh shim: the pull request body is not stamped (gh pr create will refuse it (unknown flag: --bogus)); gh runs with the arguments as given\n",
    );
  });

  it("the editor: gh's editor step goes through the shim's GH_EDITOR, which runs the user's editor, then stamps", async () => {
    const s = await shim();
    const editor = join(await tempDir(), "my-editor");
    await writeFile(editor, `#!/bin/sh\nprintf 'Title\\n\\nWritten in my editor\\n' > "$1"\n`, { mode: 0o755 });
    expect(s.run(["pr", "create"], { env: { EDITOR: editor } }).code).toBe(0);
    const [a] = await calls(s.log);
    expect(a!.args).toEqual(["pr", "create"]);
    expect(a!.editorResult).toBe("Title\n\nWritten in my editor" + FOOTER);
  });

  it("never stamps twice, never touches other commands, passes gh's exit code through", async () => {
    const s = await shim();
    s.run(["pr", "create", "--body", "Already" + FOOTER]);
    s.run(["issue", "create", "--body", "not a PR"]);
    s.run(["pr", "comment", "12", "--body", "a comment"]);
    s.run(["pr", "create", "--fill"]);
    expect(s.run(["api", "user"], { env: { FAKE_GH_EXIT: "4" } }).code).toBe(4);
    const log = await calls(s.log);
    expect(log.map((l) => l.args)).toEqual([
      ["pr", "create", "--body", "Already" + FOOTER],
      ["issue", "create", "--body", "not a PR"],
      ["pr", "comment", "12", "--body", "a comment"],
      ["pr", "create", "--fill"],
      ["api", "user"],
    ]);
  });

  it("a stamping failure never fails the command: the real gh runs with the original arguments", async () => {
    const s = await shim();
    await rm(join(s.dir, "provenance.json"));
    const r1 = s.run(["pr", "create", "--body", "B"]);
    expect(r1.code).toBe(0);
    // An unreadable body file: the shim cannot stamp, so gh gets the original path (and fails as gh does).
    const missing = join(await tempDir(), "nope.md");
    const r2 = s.run(["pr", "create", "--body-file", missing]);
    expect(r2.code).toBe(0);
    expect((await calls(s.log)).map((c) => c.args)).toEqual([
      ["pr", "create", "--body", "B"],
      ["pr", "create", "--body-file", missing],
    ]);
    expect(r1.stderr).toBe(
      "svc gh shim: the pull request body is not stamped (stamping failed: ENOENT); gh runs with the arguments as given\n",
    );
    expect(r2.stderr).toContain("(stamping failed: ENOENT)");
  });

  it("without a real gh on PATH: gh's not-found behaviour (exit 127)", async () => {
    const s = await shim();
    const r = s.run(["pr", "create", "--body", "x"], { path: `${s.dir}:/usr/bin:/bin` });
    expect(r.code).toBe(127);
    expect(r.stderr).toBe("gh: command not found\n");
  });
});

describe("provenance.wrapGh on spawned sessions", () => {
  let h: WsHarness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it("a session's own `gh pr create` is stamped with its id, adapter, model and workspace; off by default", async () => {
    const log = join(await tempDir(), "gh.log");
    const shell = { ...AGENTS.shell, env: { PATH: `${FAKE_GH_DIR}:${process.env.PATH}`, FAKE_GH_LOG: log } };
    h = await makeWsHarness({ acpAgents: { ...AGENTS, shell }, provenance: { wrapGh: true } });
    const repo = await makeRepo(await tempDir());
    const { descriptor } = await h.runtime.start({
      adapter: "shell",
      cwd: repo,
      worktree: "pr-work",
      options: { model: "m-1" },
      prompt: "gh pr create --title T --body 'Agent body'",
    });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turns === 1, "the gh call ran");
    expect(JSON.parse([...s.results.values()][0]!.text).code).toBe(0);
    const [call] = await calls(log);
    expect(call!.args).toEqual([
      "pr",
      "create",
      "--title",
      "T",
      "--body",
      "Agent body" +
        provenanceFooter({
          sessionId: descriptor.id,
          adapter: "shell",
          model: "m-1",
          workspace: descriptor.worktree!.path,
        }),
    ]);
    await h.cleanup();
    h = await makeWsHarness({ acpAgents: { ...AGENTS, shell } });
    const plain = await h.runtime.start({ adapter: "shell", cwd: repo, prompt: "echo $PATH" });
    const p = h.runtime.get(plain.descriptor.id);
    await until(() => p.turns === 1, "echo ran");
    expect(JSON.parse([...p.results.values()][0]!.text).stdout).not.toContain("/shims/");
  });
});

describe("the shim directory's name", () => {
  it("is only ever a session id of svc's, so removing one can never reach another folder", async () => {
    const home = await tempDir();
    await writeFile(join(home, "keep.txt"), "keep\n");
    for (const id of ["..", ".", "", "ses_../..", "../shims", "ses_a/b"]) {
      await expect(removeShimDir(home, id)).rejects.toThrow(/not a session id/);
      await expect(writeShimDir(home, { ...PROV, sessionId: id })).rejects.toThrow(/not a session id/);
    }
    expect(await readFile(join(home, "keep.txt"), "utf8")).toBe("keep\n");
    const dir = await writeShimDir(home, PROV);
    await removeShimDir(home, PROV.sessionId);
    expect(existsSync(dir)).toBe(false);
    await rm(home, { recursive: true, force: true });
  });
});
