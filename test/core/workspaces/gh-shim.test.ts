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

async function shim(): Promise<{ dir: string; log: string; run(args: string[], opts?: { input?: string; env?: Record<string, string>; path?: string }): { code: number | null; stderr: string } }> {
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
        env: { PATH: opts.path ?? `${dir}:${FAKE_GH_DIR}:${process.env.PATH}`, HOME: process.env.HOME, FAKE_GH_LOG: log, ...opts.env },
      });
      return { code: r.status, stderr: r.stderr };
    },
  };
}

async function calls(log: string): Promise<Array<{ args: string[]; bodyFile?: string; editorResult?: string }>> {
  return (await readFile(log, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
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
    expect(a!.bodyFile).toBe("From a file" + FOOTER);
    expect(await readFile(file, "utf8")).toBe("From a file\n");
    expect(a!.args[4]).not.toBe(file);
    expect(existsSync(a!.args[4]!)).toBe(false);
  });

  it("-F - (stdin): the body read from stdin reaches gh stamped", async () => {
    const s = await shim();
    expect(s.run(["pr", "create", "-F", "-"], { input: "Piped body\n" }).code).toBe(0);
    expect((await calls(s.log))[0]!.bodyFile).toBe("Piped body" + FOOTER);
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
    expect(s.run(["pr", "create", "--body", "B"]).code).toBe(0);
    const missing = join(await tempDir(), "nope.md");
    // An unreadable body file: the shim cannot stamp, so gh gets the original path and fails as gh does.
    expect(s.run(["pr", "create", "--body-file", missing]).code).toBe(1);
    const [a, b] = await calls(s.log).catch(() => [] as never);
    expect(a!.args).toEqual(["pr", "create", "--body", "B"]);
    expect(b).toBeUndefined();
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
    const { descriptor } = await h.runtime.start({ adapter: "shell", cwd: repo, worktree: "pr-work", options: { model: "m-1" }, prompt: "gh pr create --title T --body 'Agent body'" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turns === 1, "the gh call ran");
    expect(JSON.parse([...s.results.values()][0]!.text).code).toBe(0);
    const [call] = await calls(log);
    expect(call!.args).toEqual(["pr", "create", "--title", "T", "--body", "Agent body" + provenanceFooter({ sessionId: descriptor.id, adapter: "shell", model: "m-1", workspace: descriptor.worktree!.path })]);
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
