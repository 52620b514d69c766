import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { MAX_READ_BYTES, sliceLines } from "../../../plugins/acp/client-fs.js";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, type Harness } from "../../core/sessions/harness.js";

/** One call the fs fixture agent makes to the client (see test/fixtures/acp-agents/fs-agent.mjs). */
type Call =
  | { op: "caps" }
  | { op: "read"; path: string; line?: number; limit?: number; quiet?: boolean; sessionId?: string }
  | { op: "write"; path: string; content: string; sessionId?: string }
  | { op: "copy"; from: string; to: string };
type Result = {
  content?: string;
  ok?: boolean;
  bytes?: number;
  sha256?: string;
  error?: { code?: number; message: string; data?: Record<string, unknown> };
} & Record<string, unknown>;

let h: Harness | undefined;
let project: string; // the session's cwd (real path)
let outside: string; // a directory beside it
const temps: string[] = [];

beforeEach(async () => {
  project = await realpath(await mkdtemp(join(tmpdir(), "svc-fs-project-")));
  outside = await realpath(await mkdtemp(join(tmpdir(), "svc-fs-outside-")));
  temps.push(project, outside);
  await writeFile(join(outside, "secret.txt"), "outside secret\n");
});
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * Starts the fs fixture agent in `cwd`: `run` runs one turn of calls, `transcript` reads its
 * events.jsonl, `start(dir)` starts another such session in the same home and returns its `run`.
 */
async function fsSession(cwd = project) {
  h = await makeHarness({ acpAgents: { ...FIXTURE_AGENTS, fs: fixtureAgent("fs-agent.mjs") } });
  const start = async (dir: string) => {
    const { descriptor } = await h!.runtime.start({ adapter: "fs", cwd: dir });
    const run = async (...calls: Call[]): Promise<Result[]> => {
      const p = h!.runtime.prompt(descriptor.id, JSON.stringify(calls), {
        sender: { kind: "human" },
        urgency: "queue",
      });
      const r = await h!.runtime.waitFor(descriptor.id, p.promptId);
      expect(r.stopReason).toBe("end_turn");
      return JSON.parse(r.text) as Result[];
    };
    return { run, descriptor };
  };
  const { run, descriptor } = await start(cwd);
  const transcript = async () => {
    await h!.runtime.get(descriptor.id).transcript.flushed();
    return { text: await readFile(descriptor.eventsPath, "utf8"), lines: await readTranscript(descriptor.eventsPath) };
  };
  return { run, transcript, start: async (dir: string) => (await start(dir)).run };
}

const INVALID_PARAMS = -32602;
const NOT_FOUND = -32002;

describe("ACP client fs: fs/read_text_file and fs/write_text_file within the session's cwd", () => {
  it("offers readTextFile and writeTextFile (not terminal) at initialize", async () => {
    const { run } = await fsSession();
    const [caps] = await run({ op: "caps" });
    expect(caps).toMatchObject({ fs: { readTextFile: true, writeTextFile: true }, terminal: false });
  });

  it("reads a whole file, or lines from `line` (1-based) for `limit` lines", async () => {
    const f = join(project, "notes.txt");
    await writeFile(f, "one\ntwo\r\nthree\nfour");
    const { run } = await fsSession();
    const out = await run(
      { op: "read", path: f },
      { op: "read", path: f, line: 2, limit: 2 },
      { op: "read", path: f, line: 3 },
      { op: "read", path: f, limit: 1 },
      { op: "read", path: f, line: 9 },
      { op: "read", path: f, line: 4, limit: 5 },
    );
    expect(out.map((r) => r.content)).toEqual([
      "one\ntwo\r\nthree\nfour",
      "two\r\nthree\n",
      "three\nfour",
      "one\n",
      "",
      "four",
    ]);
  });

  it("sliceLines: line 0 is the first line, limit 0 is nothing", () => {
    expect(sliceLines("a\nb\n", 0, 1)).toBe("a\n");
    expect(sliceLines("a\nb\n", 2, 0)).toBe("");
    expect(sliceLines("a\nb\n", 3)).toBe("");
  });

  it("a missing file is resource-not-found naming the path, also below a file (ENOTDIR)", async () => {
    await writeFile(join(project, "plain.txt"), "x");
    const { run } = await fsSession();
    const [r, below] = await run(
      { op: "read", path: join(project, "nope.txt") },
      { op: "read", path: join(project, "plain.txt", "child.txt") },
    );
    expect(r!.error).toMatchObject({ code: NOT_FOUND, message: expect.stringContaining(join(project, "nope.txt")) });
    expect(below!.error).toMatchObject({
      code: NOT_FOUND,
      message: expect.stringContaining(join(project, "plain.txt", "child.txt")),
    });
  });

  it("writes a new file, creating its parent directories", async () => {
    const f = join(project, "a", "b", "new.txt");
    const { run } = await fsSession();
    expect(await run({ op: "write", path: f, content: "héllo\n" })).toEqual([{ ok: true }]);
    expect(await readFile(f, "utf8")).toBe("héllo\n");
    // The usual mode for a new directory (writeFileDurable's own are 0700), as one made here.
    await mkdir(join(project, "ref"));
    expect((await stat(join(project, "a", "b"))).mode).toBe((await stat(join(project, "ref"))).mode);
  });

  it("replacing a file keeps its mode; writing through a symlink inside cwd replaces its target", async () => {
    const script = join(project, "run.sh");
    await writeFile(script, "#!/bin/sh\necho old\n");
    await chmod(script, 0o750);
    await mkdir(join(project, "real"));
    await writeFile(join(project, "real", "x.txt"), "old");
    await symlink(join(project, "real"), join(project, "alias"));
    const { run } = await fsSession();
    expect(
      await run(
        { op: "write", path: script, content: "#!/bin/sh\necho new\n" },
        { op: "write", path: join(project, "alias", "x.txt"), content: "new" },
      ),
    ).toEqual([{ ok: true }, { ok: true }]);
    expect(await readFile(script, "utf8")).toBe("#!/bin/sh\necho new\n");
    expect((await stat(script)).mode & 0o777).toBe(0o750);
    expect(await readFile(join(project, "real", "x.txt"), "utf8")).toBe("new");
  });

  it("follows a dangling relative symlink from its directory's real path, as the kernel would", async () => {
    await mkdir(join(project, "real", "deep"), { recursive: true });
    await symlink(join(project, "real", "deep"), join(project, "alias"));
    await symlink(join("..", "target.txt"), join(project, "real", "deep", "link"));
    const { run } = await fsSession();
    expect(await run({ op: "write", path: join(project, "alias", "link"), content: "x" })).toEqual([{ ok: true }]);
    expect(await readFile(join(project, "real", "target.txt"), "utf8")).toBe("x");
    await expect(stat(join(project, "target.txt"))).rejects.toThrow();
  });

  it("refuses a relative path as invalid params", async () => {
    await writeFile(join(project, "notes.txt"), "x");
    const { run } = await fsSession();
    const out = await run({ op: "read", path: "notes.txt" }, { op: "write", path: "out.txt", content: "x" });
    for (const r of out)
      expect(r.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringMatching(/must be absolute/) });
    await expect(stat(join(project, "out.txt"))).rejects.toThrow();
  });

  it("refuses paths outside cwd, naming the path and the allowed root, for reads and writes", async () => {
    const { run } = await fsSession();
    const out = await run(
      { op: "read", path: join(outside, "secret.txt") },
      { op: "read", path: `${project}/../${basename(outside)}/secret.txt` },
      { op: "write", path: join(outside, "planted.txt"), content: "x" },
      { op: "read", path: "/etc/passwd" },
    );
    for (const r of out) {
      expect(r.error).toMatchObject({ code: INVALID_PARAMS, data: { allowedRoot: project } });
      expect(r.error!.message).toContain(`outside the session's working directory ${project}`);
    }
    expect(out[0]!.error!.message).toContain(join(outside, "secret.txt"));
    await expect(stat(join(outside, "planted.txt"))).rejects.toThrow();
  });

  it("refuses a symlink inside cwd that leads outside: to a file, to a directory, or dangling", async () => {
    await symlink(join(outside, "secret.txt"), join(project, "passwd"));
    await symlink(outside, join(project, "out"));
    await symlink(join(outside, "not-yet.txt"), join(project, "dangling"));
    const { run } = await fsSession();
    const out = await run(
      { op: "read", path: join(project, "passwd") },
      { op: "read", path: join(project, "out", "secret.txt") },
      { op: "write", path: join(project, "passwd"), content: "overwritten" },
      { op: "write", path: join(project, "out", "sub", "planted.txt"), content: "x" },
      { op: "write", path: join(project, "dangling"), content: "x" },
    );
    for (const r of out)
      expect(r.error).toMatchObject({
        code: INVALID_PARAMS,
        message: expect.stringMatching(/resolves to .* outside the session's working directory/),
      });
    expect(out[0]!.error!.message).toContain(`${join(project, "passwd")} (resolves to ${join(outside, "secret.txt")})`);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("outside secret\n");
    await expect(stat(join(outside, "sub"))).rejects.toThrow();
    await expect(stat(join(outside, "not-yet.txt"))).rejects.toThrow();
  });

  it("refuses anything in $SVC_HOME, when cwd contains it and when cwd is it", async () => {
    const { start } = await fsSession();
    const home = await realpath(h!.home);
    for (const cwd of [dirname(home), home]) {
      const run = await start(cwd);
      const out = await run(
        { op: "read", path: join(home, "config.json") },
        { op: "write", path: join(home, "credentials.json"), content: "{}" },
      );
      for (const r of out)
        expect(r.error).toMatchObject({
          code: INVALID_PARAMS,
          data: { svcHome: home },
          message: expect.stringContaining(`inside the svc home ${home}`),
        });
    }
    await expect(stat(join(home, "credentials.json"))).rejects.toThrow();
  });

  it("opens the worktrees under $SVC_HOME (the default worktrees.root) to a session working there", async () => {
    const { start } = await fsSession();
    const home = await realpath(h!.home);
    const tree = join(home, "worktrees", "api", "fix-1");
    await mkdir(tree, { recursive: true });
    await writeFile(join(tree, "main.ts"), "export {};\n");
    const run = await start(tree);
    const [read, write, secret] = await run(
      { op: "read", path: join(tree, "main.ts") },
      { op: "write", path: join(tree, "src", "new.ts"), content: "x\n" },
      { op: "read", path: join(home, "config.json") },
    );
    expect(read!.content).toBe("export {};\n");
    expect(write!.ok).toBe(true);
    expect(await readFile(join(tree, "src", "new.ts"), "utf8")).toBe("x\n");
    expect(secret!.error).toMatchObject({ code: INVALID_PARAMS }); // outside the cwd, and in the svc home
  });

  it("refuses the session transcripts folder (sessions.eventsDir) even inside the session's cwd", async () => {
    h = await makeHarness({
      acpAgents: { ...FIXTURE_AGENTS, fs: fixtureAgent("fs-agent.mjs") },
      sessions: { eventsDir: join(project, "transcripts") },
    });
    const { descriptor } = await h.runtime.start({ adapter: "fs", cwd: project });
    expect(descriptor.eventsPath.startsWith(join(project, "transcripts"))).toBe(true);
    const p = h.runtime.prompt(
      descriptor.id,
      JSON.stringify([
        { op: "read", path: descriptor.eventsPath },
        { op: "write", path: descriptor.eventsPath, content: "{}\n" },
      ]),
      { sender: { kind: "human" }, urgency: "queue" },
    );
    const out = JSON.parse((await h.runtime.waitFor(descriptor.id, p.promptId)).text) as Result[];
    for (const r of out)
      expect(r.error).toMatchObject({
        code: INVALID_PARAMS,
        message: expect.stringContaining("inside the session transcripts folder"),
      });
    expect(await readFile(descriptor.eventsPath, "utf8")).not.toBe("{}\n");
  });

  it("refuses text that would be over one ACP message once JSON-encoded (control characters grow sixfold), and serves it in parts", async () => {
    // 6 MiB of U+0001 is under the 10 MiB read limit and 36 MiB as JSON; 1,024 lines of 6 KiB each.
    const line = "\u0001".repeat(6 * 1024 - 1) + "\n";
    await writeFile(join(project, "ctl.txt"), line.repeat(1024));
    const { run } = await fsSession();
    const [whole, part] = await run(
      { op: "read", path: join(project, "ctl.txt") },
      { op: "read", path: join(project, "ctl.txt"), line: 1, limit: 100, quiet: true },
    );
    expect(whole!.error).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining("read it in parts with line and limit"),
    });
    expect(part!.bytes).toBe(100 * line.length);
  });

  it("refuses a file larger than the read limit, one that is not UTF-8, and a FIFO (without waiting for a writer)", async () => {
    await writeFile(join(project, "big.txt"), Buffer.alloc(MAX_READ_BYTES + 1, "a"));
    await writeFile(join(project, "ok.txt"), Buffer.alloc(MAX_READ_BYTES, "a"));
    await writeFile(join(project, "bin.dat"), Buffer.from([0x66, 0xff, 0xfe, 0x00]));
    execFileSync("mkfifo", [join(project, "fifo")]);
    const { run } = await fsSession();
    const [big, ok, bin, fifo] = await run(
      { op: "read", path: join(project, "big.txt") },
      { op: "read", path: join(project, "ok.txt"), quiet: true },
      { op: "read", path: join(project, "bin.dat") },
      { op: "read", path: join(project, "fifo") },
    );
    expect(big!.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining("larger than 10 MiB") });
    expect(ok!.bytes).toBe(MAX_READ_BYTES);
    expect(bin!.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining("not UTF-8 text") });
    expect(fifo!.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining("not a regular file") });
  });

  it("refuses a call for another session id", async () => {
    await writeFile(join(project, "notes.txt"), "x");
    const { run } = await fsSession();
    const [r] = await run({ op: "read", path: join(project, "notes.txt"), sessionId: "someone-else" });
    expect(r!.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining("unknown session") });
  });

  it("records each call in the transcript with its path and byte count, never the contents", async () => {
    const marker = "TOP-SECRET-CONTENT-7f3a9c";
    await writeFile(join(project, "src.txt"), `${marker}\n`);
    const { run, transcript } = await fsSession();
    const [copied] = await run({ op: "copy", from: join(project, "src.txt"), to: join(project, "dst", "copy.txt") });
    await run(
      { op: "read", path: join(project, "src.txt"), line: 1, limit: 1, quiet: true },
      { op: "read", path: join(outside, "secret.txt"), quiet: true },
    );
    expect(copied!.bytes).toBe(marker.length + 1);
    expect(await readFile(join(project, "dst", "copy.txt"), "utf8")).toBe(`${marker}\n`);
    const { text, lines } = await transcript();
    expect(text).not.toContain(marker);
    expect(text).not.toContain("outside secret");
    const fsLines = lines
      .filter((l) => l.type === "update" && String((l.data as { kind: string }).kind).startsWith("fs_"))
      .map((l) => l.data);
    expect(fsLines).toEqual([
      { kind: "fs_read_text_file", update: { path: join(project, "src.txt"), bytes: marker.length + 1 } },
      {
        kind: "fs_write_text_file",
        update: { path: join(project, "dst", "copy.txt"), bytes: marker.length + 1, created: true },
      },
      {
        kind: "fs_read_text_file",
        update: { path: join(project, "src.txt"), line: 1, limit: 1, bytes: marker.length + 1 },
      },
      {
        kind: "fs_read_text_file",
        update: {
          path: join(outside, "secret.txt"),
          error: expect.stringContaining("outside the session's working directory"),
        },
      },
    ]);
  });
});
