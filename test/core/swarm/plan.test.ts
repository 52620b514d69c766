/**
 * The swarm file and its plan without a daemon: the schema and its generated JSON Schema, the
 * examples resolved by `svc run-swarm --dry-run` on a fresh home, model precedence layer by layer
 * with sources, `role:` chains and cycles (in a run and at `config set`), graph errors.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { setConfigKey } from "../../../core/config/write.js";
import { swarmJsonSchemaText, SWARM_SCHEMA_FILE } from "../../../core/swarm/write-schema.js";
import { parseSwarmFile } from "../../../core/swarm/schema.js";
import { checkGraph } from "../../../core/swarm/graph.js";
import { makeTempHome, runCli } from "../../support/cli.js";
import { REPO_ROOT } from "../../support/paths.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function home(config?: unknown): Promise<string> {
  const t = await makeTempHome("svc-swarm-plan-");
  cleanups.push(t.cleanup);
  if (config) await writeFile(join(t.home, "config.json"), JSON.stringify(config));
  return t.home;
}

/** A git repository with a swarm file of one step `model: role:<role>` and, optionally, .svc/models.json. */
async function repo(h: string, role: string, repoModels?: Record<string, unknown>): Promise<string> {
  const dir = join(h, "repo");
  await mkdir(join(dir, "sub"), { recursive: true });
  execFileSync("git", ["init", "-q", dir]);
  if (repoModels) {
    await mkdir(join(dir, ".svc"), { recursive: true });
    await writeFile(join(dir, ".svc", "models.json"), JSON.stringify({ models: repoModels }));
  }
  const file = join(dir, "sub", "one.swarm.json");
  await writeFile(
    file,
    JSON.stringify({
      schema: "svc/swarm/v1",
      steps: [{ id: "s", model: `role:${role}`, adapter: "claude", prompt: "hi" }],
    }),
  );
  return file;
}

async function dryRun(h: string, file: string, ...args: string[]) {
  const r = await runCli(["run-swarm", file, "--dry-run", "--json", ...args], { home: h });
  return { ...r, plan: r.stdout ? JSON.parse(r.stdout).plan : undefined };
}

describe("the swarm file", () => {
  it("manifests/swarm-v1.schema.json is up to date (run `npm run docs`)", async () => {
    expect(await readFile(join(REPO_ROOT, SWARM_SCHEMA_FILE), "utf8"), "run `npm run docs`").toBe(
      swarmJsonSchemaText(),
    );
  });

  it("errors name the step and the field", () => {
    const bad = {
      schema: "svc/swarm/v1",
      steps: [
        { id: "ok", model: "m", prompt: "p" },
        { id: "build", model: "", prompt: "p" },
      ],
    };
    expect(() => parseSwarmFile(bad, "f.swarm.json")).toThrow(/^f\.swarm\.json: steps\[build\]\.model: /);
    expect(() => parseSwarmFile({ schema: "svc/swarm/v2", steps: [] }, "f")).toThrow(/f: schema: /);
    expect(() => parseSwarmFile({ schema: "svc/swarm/v1", steps: [{ id: "x", model: "m" }] }, "f")).toThrow(
      /steps\[x\]\.prompt/,
    );
    expect(() =>
      parseSwarmFile({ schema: "svc/swarm/v1", steps: [{ id: "b", model: "m", prompt: "p", need: ["a"] }] }, "f"),
    ).toThrow('f: steps[b]: Unrecognized key: "need"');
  });

  it("needs must name steps without a cycle, and a prompt reads only outputs of steps it needs", () => {
    const f = (steps: unknown[]) => parseSwarmFile({ schema: "svc/swarm/v1", steps }).steps;
    expect(() =>
      checkGraph(
        f([
          { id: "a", model: "m", prompt: "p", needs: ["b"] },
          { id: "b", model: "m", prompt: "p", needs: ["a"] },
        ]),
      ),
    ).toThrow("steps need each other in a cycle: a -> b -> a");
    expect(() => checkGraph(f([{ id: "a", model: "m", prompt: "p", needs: ["zz"] }]))).toThrow(
      'steps[a].needs: no step "zz"',
    );
    expect(() =>
      checkGraph(
        f([
          { id: "a", model: "m", prompt: "p" },
          { id: "b", model: "m", prompt: "${{ steps.a.output }}" },
        ]),
      ),
    ).toThrow(/uses the output of "a", which it does not need/);
    expect(() =>
      checkGraph(
        f([
          { id: "a", model: "m", prompt: "p" },
          { id: "a", model: "m", prompt: "p" },
        ]),
      ),
    ).toThrow(/used by more than one step/);
    expect(
      checkGraph(
        f([
          { id: "c", model: "m", prompt: "p", needs: ["b"] },
          { id: "b", model: "m", prompt: "p", needs: ["a"] },
          { id: "a", model: "m", prompt: "p" },
        ]),
      ),
    ).toEqual(["a", "b", "c"]);
  });

  it("every example under examples/ resolves with --dry-run on a fresh home, nothing started", async () => {
    const h = await home();
    const examples = (await readdir(join(REPO_ROOT, "examples"))).filter((f) => f.endsWith(".swarm.json"));
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const ex of examples) {
      const r = await dryRun(h, join(REPO_ROOT, "examples", ex));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      for (const s of r.plan.steps) {
        expect(s.problem).toBeUndefined();
        expect(s.adapter.slug).toMatch(/^(claude|codex|gemini)$/);
        expect(s.model.source).toMatch(/^(step|default)$/);
      }
    }
    expect(await readdir(h)).toEqual([]);
  });
});

describe("model resolution in a run, with sources", () => {
  it("each layer wins in turn: --model > the repository's models file > config models > built-in default", async () => {
    const h = await home({ models: { "review.small": "gpt-5" } });
    // default: a built-in role no layer sets
    let r = await dryRun(h, await repo(h, "review.large"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.plan.steps[0].model).toMatchObject({ id: "claude-opus-4-5", source: "default" });
    // config over default
    await rmRepo(h);
    r = await dryRun(h, await repo(h, "review.small"));
    expect(r.plan.steps[0].model).toMatchObject({ id: "gpt-5", source: "config" });
    // repository over config
    await rmRepo(h);
    const file = await repo(h, "review.small", { "review.small": "gemini-2.5-pro" });
    r = await dryRun(h, file);
    expect(r.plan.steps[0].model).toMatchObject({ id: "gemini-2.5-pro", source: "repository" });
    expect(r.plan.models.repository.path).toBe(join(h, "repo", ".svc", "models.json"));
    // the run's --model over all
    r = await dryRun(h, file, "--model", "review.small=gpt-5-mini");
    expect(r.plan.steps[0].model).toMatchObject({ id: "gpt-5-mini", source: "run" });
    expect(r.plan.steps[0].options).toEqual({ model: "gpt-5-mini" });
    // the text plan says the same
    const text = await runCli(["run-swarm", file, "--dry-run", "--model", "review.small=gpt-5-mini"], { home: h });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/1\s+s\s+-\s+gpt-5-mini \(role:review\.small@run\)\s+claude \(ACP catalog\)\s+step\s+/);
  });

  it("a role: chain is followed across layers with each hop's source; a cycle fails the step naming the chain", async () => {
    const h = await home({ models: { writer: "role:review.small" } });
    const file = await repo(h, "lead", { lead: "role:writer" });
    let r = await dryRun(h, file);
    expect(r.plan.steps[0].model).toEqual({
      ref: "role:lead",
      id: "claude-haiku-4-5",
      source: "repository",
      chain: [
        { role: "lead", value: "role:writer", source: "repository" },
        { role: "writer", value: "role:review.small", source: "config" },
        { role: "review.small", value: "claude-haiku-4-5", source: "default" },
      ],
    });
    r = await dryRun(h, file, "--model", "review.small=role:lead");
    expect(r.code).toBe(1);
    expect(r.plan.steps[0].problem).toContain(
      "model roles refer to each other in a cycle: role:lead -> role:writer -> role:review.small -> role:lead",
    );
  });

  it("the repository's models file is validated with the config schema's models section", async () => {
    const h = await home();
    const file = await repo(h, "review.small", { "review.small": 5 });
    const r = await runCli(["run-swarm", file, "--dry-run"], { home: h });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${join(h, "repo", ".svc", "models.json")}: models.review.small:`);
  });

  it("config set refuses a role cycle (and an undefined role) and leaves the file as it was", async () => {
    const h = await home({ models: { a: "role:review.small" } });
    const path = join(h, "config.json");
    const before = await readFile(path, "utf8");
    await expect(setConfigKey(path, "models.cyc", "role:cyc")).rejects.toThrow(
      /refused to change models\.cyc.*cycle: role:cyc -> role:cyc/,
    );
    await expect(setConfigKey(path, "models.review.small", "role:a")).rejects.toThrow(
      /cycle: role:a -> role:review\.small -> role:a|cycle: role:review\.small -> role:a -> role:review\.small/,
    );
    await expect(setConfigKey(path, "models.b", "role:nope")).rejects.toThrow(/model role "nope" is not defined/);
    expect(await readFile(path, "utf8")).toBe(before);
    const cli = await runCli(["config", "set", "models.cyc", "role:cyc"], { home: h });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("cycle: role:cyc -> role:cyc");
  });

  it("a model no adapter fits fails its step at plan time with what to do", async () => {
    const h = await home();
    const file = join(h, "x.swarm.json");
    await writeFile(
      file,
      JSON.stringify({ schema: "svc/swarm/v1", steps: [{ id: "s", model: "mystery-1", prompt: "p" }] }),
    );
    const r = await dryRun(h, file);
    expect(r.code).toBe(1);
    expect(r.plan.steps[0].problem).toMatch(/no adapter fits model "mystery-1".*give steps\[s\]\.adapter/);
  });
});

async function rmRepo(h: string): Promise<void> {
  const { rm } = await import("node:fs/promises");
  await rm(join(h, "repo"), { recursive: true, force: true });
}
