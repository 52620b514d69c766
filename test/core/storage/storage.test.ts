import { spawn } from "node:child_process";
import { chmod, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileDurable } from "../../../core/storage/atomic-write.js";
import { readJsonFile, updateJsonFile } from "../../../core/storage/json-file.js";
import { withFileLock } from "../../../core/storage/lock.js";
import { SvcError } from "../../../core/errors.js";
import { makeTempHome } from "../../support/cli.js";
import { FIXTURES } from "../../support/paths.js";

const WRITER = join(FIXTURES, "scripts/json-writer.mjs");

function runWriter(args: string[]) {
  const child = spawn(process.execPath, [WRITER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const done = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, done, out: () => out, err: () => err };
}

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome()));
afterEach(() => cleanup());

describe("atomic durable writes", () => {
  it("creates a secret-bearing file with its mode from the start and leaves no temp files", async () => {
    const file = join(home, "secrets.json");
    await writeFileDurable(file, "{}", { mode: 0o600 });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(home)).toEqual(["secrets.json"]);
  });

  it("createMode: a new file is created with it; an existing file keeps its own mode, wider or narrower", async () => {
    const file = join(home, "config.json");
    await writeFileDurable(file, "{}", { createMode: 0o600 });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    for (const mode of [0o644, 0o640, 0o600]) {
      await chmod(file, mode);
      await writeFileDurable(file, `{"m":${mode}}`, { createMode: 0o600 });
      expect((await stat(file)).mode & 0o777).toBe(mode);
    }
  });

  it("a writer killed with -9 at random moments leaves either the old or the new file, never a torn one", async () => {
    const file = join(home, "state.json");
    for (let round = 0; round < 6; round++) {
      const w = runWriter([file, "churn", "0"]);
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (w.out().split("\n").length > 2 + (round % 3)) {
            clearInterval(poll);
            resolve();
          }
        }, 2);
      });
      await new Promise((r) => setTimeout(r, Math.random() * 15));
      w.child.kill("SIGKILL");
      await w.done;
      const parsed = JSON.parse(await readFile(file, "utf8"));
      expect(parsed.check).toBe(`${parsed.version}:${parsed.filler.length}`);
    }
  });
});

describe("cross-process lock", () => {
  it("parallel writers from several processes never lose each other's updates", async () => {
    const file = join(home, "counter.json");
    // Four processes incrementing the same key: any update read-modify-written outside the lock is lost.
    const writers = Array.from({ length: 4 }, () => runWriter([file, "increment", "25", "shared"]));
    const codes = await Promise.all(writers.map((w) => w.done));
    expect(codes, writers.map((w) => w.err()).join("\n")).toEqual([0, 0, 0, 0]);
    expect(await readJsonFile(file)).toEqual({ shared: 100 });
  });

  it("in-process and cross-process updates of different keys both persist", async () => {
    const file = join(home, "mixed.json");
    const other = runWriter([file, "increment", "20", "theirs"]);
    for (let i = 0; i < 20; i++)
      await updateJsonFile<Record<string, number>>(file, (c) => ({ ...c, mine: (c?.mine ?? 0) + 1 }));
    await other.done;
    expect(await readJsonFile(file)).toEqual({ mine: 20, theirs: 20 });
  });

  it("a lock whose holder was killed with -9 is taken over once stale", async () => {
    const file = join(home, "wedged.json");
    const holder = runWriter([file, "hold-lock", "0"]);
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => holder.out().includes("locked") && (clearInterval(poll), resolve()), 5);
    });
    holder.child.kill("SIGKILL");
    await holder.done;
    const ran = await withFileLock(file, async () => "ran", { staleMs: 5000, waitMs: 15_000 });
    expect(ran).toBe("ran");
  });

  it("gives up with a clear error when the lock stays held", async () => {
    const file = join(home, "busy.json");
    await withFileLock(file, async () => {
      const err = await withFileLock(file, async () => "no", { waitMs: 100 }).catch((e) => e);
      expect(SvcError.is(err)).toBe(true);
      expect(err.message).toContain("could not lock");
    });
  });

  it("a corrupt file is reported with its path, and left untouched", async () => {
    const file = join(home, "torn.json");
    await writeFile(file, '{"half": ');
    const err = (await readJsonFile(file).catch((e: Error) => e)) as Error;
    expect(err.message).toContain(file);
    expect(err.message).toContain("not valid JSON");
    await expect(updateJsonFile(file, () => ({}))).rejects.toThrow("not valid JSON");
    expect(await readFile(file, "utf8")).toBe('{"half": ');
  });
});
