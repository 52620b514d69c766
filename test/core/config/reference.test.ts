import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, it } from "vitest";
import { configJsonSchemaText } from "../../../core/config/json-schema.js";
import { validateConfigTree } from "../../../core/config/load.js";
import { referenceIn, renderReference } from "../../../core/config/reference.js";
import { makeTempHome, runCli } from "../../support/cli.js";
import { REPO_ROOT } from "../../support/paths.js";
import { sectionOf } from "../../support/readme.js";

const readme = () => readFile(join(REPO_ROOT, "docs/configuration.md"), "utf8");

function exampleConfig(text: string): Record<string, unknown> {
  const block = sectionOf(text, "config-example");
  return JSON.parse(/```json\n([\s\S]*?)```/.exec(block)![1]!);
}

describe("generated configuration docs", () => {
  it("docs/configuration.md's reference is up to date (run `npm run docs`)", async () => {
    expect(referenceIn(await readme()), "docs/configuration.md reference is stale: run `npm run docs`").toBe(
      renderReference(),
    );
  });

  it("manifests/config.schema.json is up to date (run `npm run docs`)", async () => {
    expect(await readFile(join(REPO_ROOT, "manifests/config.schema.json"), "utf8"), "run `npm run docs`").toBe(
      configJsonSchemaText(),
    );
  });

  it("the reference has one table per section and every env override", () => {
    const ref = renderReference();
    for (const section of [
      "daemon",
      "pairing",
      "defaults",
      "acpAgents",
      "worktrees",
      "spawn",
      "provenance",
      "terminalPresets",
      "sessions",
      "features",
      "models",
      "extJudge",
      "tunnel",
      "webhooks",
      "store",
    ]) {
      expect(ref).toContain(`### ${section}\n`);
    }
    for (const v of [
      "SVC_TURN_STALL_AFTER_MS",
      "SVC_WORKTREES_ROOT",
      "SVC_WORKTREES_ISOLATION",
      "SVC_WORKTREES_PROVISION_CONCURRENCY",
      "SVC_SPAWN_ATTACH",
      "SVC_SPAWN_DEDUPE",
      "SVC_PROVENANCE_WRAP_GH",
      "SVC_SESSIONS_ATTENTION_DELAY_SEC",
      "EXT_JUDGE_API_KEY",
      "SVC_STORE_URL",
      "SVC_STORE_KEY_FILE",
    ]) {
      expect(ref).toContain(v);
    }
  });
});

describe("`svc config schema` validates the README example and rejects a wrong one", () => {
  let validate: ReturnType<Ajv2020["compile"]>;
  let example: Record<string, unknown>;

  beforeAll(async () => {
    const home = await makeTempHome();
    const r = await runCli(["config", "schema"], { home: home.home });
    await home.cleanup();
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(configJsonSchemaText());
    validate = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(r.stdout));
    example = exampleConfig(await readme());
  });

  it("the full example is valid for the JSON Schema and for the loader, and uses every section", () => {
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(validateConfigTree("README example", example).warnings).toEqual([]);
    const schema = JSON.parse(configJsonSchemaText());
    expect(Object.keys(example).sort()).toEqual(Object.keys(schema.properties).sort());
  });

  it.each([
    ["a string port", { daemon: { port: "80" } }, "/daemon/port"],
    ["an unknown enum value", { spawn: { attach: "never" } }, "/spawn/attach"],
    ["an ACP agent without bin", { acpAgents: { x: { name: "x" } } }, "/acpAgents/x"],
    ["a negative concurrency", { worktrees: { provisionConcurrency: -1 } }, "/worktrees/provisionConcurrency"],
    ["a model role of the wrong shape", { models: { "review.small": { route: "r" } } }, "/models/review.small"],
    ["a non-URL judge endpoint", { extJudge: { baseUrl: "judge" } }, "/extJudge/baseUrl"],
  ])("rejects %s", (_what, patch, where) => {
    const wrong = { ...structuredClone(example), ...patch };
    expect(validate(wrong)).toBe(false);
    expect(validate.errors!.map((e) => e.instancePath).join(" ")).toContain(where);
  });

  it("tolerates unknown keys, as the loader does", () => {
    expect(validate({ ...example, someFutureKey: { a: 1 }, daemon: { port: 1, laterField: true } })).toBe(true);
  });
});
