import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, type CliResult } from "../../support/cli.js";
import { CORPUS_CLI_PATH, REPO_ROOT } from "../../support/paths.js";
import { makeSandbox, type Sandbox } from "../plugin-host/sandbox.js";

function corpus(args: string[], sb: Sandbox, cwd = sb.cwd): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CORPUS_CLI_PATH, ...args], {
      cwd,
      env: childEnv(sb.home, sb.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe("the svc-corpus binary", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await makeSandbox();
    await sb.place("install", "svc-fixture-corpus-presets");
    await sb.place("cwd", "svc-fixture-corpus-presets-extra");
  });
  afterAll(() => sb.cleanup());

  it("with no config, looks for the default @svc/corpus-presets and warns that it is missing", async () => {
    const r = await corpus(["init", "--list"], sb);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'corpus preset package @svc/corpus-presets skipped: package "@svc/corpus-presets" is not installed',
    );
  });

  it("--list enumerates the merged set of corpusPresetPackages; a missing package warns and the rest are listed", async () => {
    await sb.writeConfig({
      corpusPresetPackages: ["svc-fixture-corpus-presets", "svc-fixture-gone", "svc-fixture-corpus-presets-extra"],
    });
    const r = await corpus(["init", "--list", "--json"], sb);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("svc-fixture-gone skipped");
    const out = JSON.parse(r.stdout);
    expect(
      out.presets.map((p: { slug: string; package: string; resolvedFrom: string; replaces: string[] }) => [
        p.slug,
        p.package,
        p.resolvedFrom,
        p.replaces,
      ]),
    ).toEqual([
      ["minimal", "svc-fixture-corpus-presets-extra", "cwd", ["svc-fixture-corpus-presets"]],
      ["notes", "svc-fixture-corpus-presets", "install", []],
    ]);
    const text = await corpus(["init", "--list"], sb);
    expect(text.stdout).toMatch(/notes +svc-fixture-corpus-presets +A notes folder with an index/);
  });

  it("init <slug> --dir materialises a directory preset, and refuses to overwrite unless --force", async () => {
    const dir = join(sb.root, "out");
    const r = await corpus(["init", "notes", "--dir", dir], sb);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(dir, "INDEX.md"), "utf8")).toContain("# Notes");
    expect(await readFile(join(dir, "notes", "first.md"), "utf8")).toBe("# First note\n");
    await writeFile(join(dir, "INDEX.md"), "mine\n");
    const again = await corpus(["init", "notes", "--dir", dir], sb);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already has INDEX.md");
    expect(again.stderr).toContain("--force");
    expect(await readFile(join(dir, "INDEX.md"), "utf8")).toBe("mine\n");
    expect((await corpus(["init", "notes", "--dir", dir, "--force"], sb)).code).toBe(0);
    expect(await readFile(join(dir, "INDEX.md"), "utf8")).toContain("# Notes");
  });

  it("init <slug> writes an inline-files preset into the cwd by default (the later package's preset wins)", async () => {
    const cwd = join(sb.cwd, "project");
    await mkdir(cwd);
    const r = await corpus(["init", "minimal"], sb, cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(cwd, "README.md"), "utf8")).toBe("# Extra\n");
    expect(existsSync(join(cwd, ".gitignore"))).toBe(true);
  });

  it("an unknown slug is an error naming the available ones; a missing slug is a usage error", async () => {
    const r = await corpus(["init", "nope"], sb);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no corpus preset "nope"');
    expect(r.stderr).toContain("available: minimal, notes");
    const missing = await corpus(["init"], sb);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("svc-corpus init needs a preset slug");
    expect((await corpus(["init", "--help"], sb)).code).toBe(0);
  });

  it("is installed as svc-corpus (a name no other tool's `corpus` clashes with), and says so in its help", async () => {
    const pj = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(Object.keys(pj.bin).sort()).toEqual(["svc", "svc-corpus"]);
    expect(join(REPO_ROOT, pj.bin["svc-corpus"]!)).toBe(CORPUS_CLI_PATH);
    const help = await corpus(["--help"], sb);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc-corpus /m);
  });
});
