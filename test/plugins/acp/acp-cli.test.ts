import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ACP_CATALOG } from "../../../core/config/acp-catalog.js";
import { makeTempHome, runCli } from "../../support/cli.js";

let tmp: { home: string; cleanup(): Promise<void> };
afterEach(async () => tmp?.cleanup());

/** A PATH with nothing of the catalog on it (node and bash only). */
const BARE_PATH = "/usr/bin:/bin";

describe("svc acp", () => {
  it("ls on a fresh home lists the catalog with install hints for missing binaries, and creates nothing", async () => {
    tmp = await makeTempHome();
    const r = await runCli(["acp", "ls", "--json"], { home: tmp.home, env: { PATH: BARE_PATH } });
    expect(r.code).toBe(0);
    const { agents } = JSON.parse(r.stdout);
    expect(agents.map((a: { slug: string }) => a.slug).sort()).toEqual(Object.keys(ACP_CATALOG).sort());
    for (const a of agents) {
      expect(a).toMatchObject({
        source: "catalog",
        shadows: [],
        onPath: false,
        install_hint: ACP_CATALOG[a.slug]!.install_hint,
      });
    }
    expect(agents.find((a: { slug: string }) => a.slug === "gemini")).toMatchObject({ bin: "gemini", args: ["--acp"] });
    await expect(readFile(join(tmp.home, "config.json"))).rejects.toThrow(/ENOENT/);
    const table = await runCli(["acp", "ls"], { home: tmp.home, env: { PATH: BARE_PATH } });
    expect(table.stdout).toContain("missing: npm install -g @google/gemini-cli");
  });

  it("add writes acpAgents.<slug> lazily and keeps unknown keys; the entry shadows the catalog; rm removes it", async () => {
    tmp = await makeTempHome();
    let r = await runCli(
      [
        "acp",
        "add",
        "mine",
        "--bin",
        "node",
        "--arg",
        "agent.js",
        "--arg",
        "--acp",
        "--env",
        "A=1",
        "--env",
        "B=x=y",
        "--name",
        "Mine",
        "--description",
        "my agent",
        "--resumable",
      ],
      { home: tmp.home },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(await readFile(join(tmp.home, "config.json"), "utf8"))).toEqual({
      acpAgents: {
        mine: {
          bin: "node",
          bin_args: ["agent.js", "--acp"],
          name: "Mine",
          description: "my agent",
          env: { A: "1", B: "x=y" },
          resumable: true,
        },
      },
    });
    await writeFile(
      join(tmp.home, "config.json"),
      JSON.stringify({ someFutureKey: { x: 1 }, acpAgents: { mine: { bin: "node" } } }),
    );
    r = await runCli(["acp", "add", "gemini", "--bin", "node"], { home: tmp.home });
    expect(r.code).toBe(0);
    const tree = JSON.parse(await readFile(join(tmp.home, "config.json"), "utf8"));
    expect(tree.someFutureKey).toEqual({ x: 1 });
    const { agents } = JSON.parse((await runCli(["acp", "ls", "--json"], { home: tmp.home })).stdout);
    expect(agents.find((a: { slug: string }) => a.slug === "gemini")).toMatchObject({
      source: "config",
      shadows: ["catalog"],
      bin: "node",
      onPath: true,
    });
    expect(agents.find((a: { slug: string }) => a.slug === "mine")).toMatchObject({ source: "config", shadows: [] });
    expect((await runCli(["acp", "rm", "gemini"], { home: tmp.home })).code).toBe(0);
    const after = JSON.parse((await runCli(["acp", "ls", "--json"], { home: tmp.home })).stdout).agents;
    expect(after.find((a: { slug: string }) => a.slug === "gemini").source).toBe("catalog");
    const missing = await runCli(["acp", "rm", "gemini"], { home: tmp.home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("catalog entries cannot be removed");
  });

  it("rejects bad input with usage errors", async () => {
    tmp = await makeTempHome();
    expect((await runCli(["acp", "add", "Bad Slug", "--bin", "x"], { home: tmp.home })).code).toBe(2);
    expect((await runCli(["acp", "add", "ok", "--bin", "x", "--env", "NOEQUALS"], { home: tmp.home })).code).toBe(2);
    expect((await runCli(["acp", "add", "ok"], { home: tmp.home })).code).toBe(2);
  });

  it("a malformed acpAgents entry is dropped with a warning; the rest still lists", async () => {
    tmp = await makeTempHome();
    await writeFile(
      join(tmp.home, "config.json"),
      JSON.stringify({ acpAgents: { broken: { args: ["x"] }, fine: { bin: "node" } } }),
    );
    const r = await runCli(["acp", "ls", "--json"], { home: tmp.home });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("acpAgents.broken dropped");
    const slugs = JSON.parse(r.stdout).agents.map((a: { slug: string }) => a.slug);
    expect(slugs).toContain("fine");
    expect(slugs).not.toContain("broken");
  });

  it("an @svc/adapter-<slug> package wins over config and catalog", async () => {
    tmp = await makeTempHome();
    const pkgDir = join(tmp.home, "proj", "node_modules", "@svc", "adapter-claude");
    await mkdir(pkgDir, { recursive: true });
    await writeFile(
      join(pkgDir, "package.json"),
      JSON.stringify({
        name: "@svc/adapter-claude",
        version: "1.0.0",
        type: "module",
        main: "./index.js",
        "svc-adapter": {
          schema: "svc/adapter/v1",
          svc: ">=0.20.0",
          plugins: [{ type: "adapter", kind: "claude", entry: "./index.js", description: "Claude, natively" }],
        },
      }),
    );
    await writeFile(join(pkgDir, "index.js"), "export default {};\n");
    await writeFile(
      join(tmp.home, "config.json"),
      JSON.stringify({ adapters: ["@svc/adapter-claude"], acpAgents: { claude: { bin: "node" } } }),
    );
    const r = await runCli(["acp", "ls", "--json"], { home: tmp.home, cwd: join(tmp.home, "proj") });
    expect(r.stderr).toBe("");
    const claude = JSON.parse(r.stdout).agents.find((a: { slug: string }) => a.slug === "claude");
    expect(claude).toMatchObject({ source: "package", package: "@svc/adapter-claude", shadows: ["config", "catalog"] });
  });
});
