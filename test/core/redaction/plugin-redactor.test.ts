/**
 * Redactor plugins from a real package, loaded by the daemon's own modules (the plugin host and
 * the redaction module in a container of their own): the package is installed after they started.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DependencyContainer } from "tsyringe";
import { createContainer } from "../../../core/container.js";
import { pluginHostModule } from "../../../core/plugin-host/module.js";
import { PLUGIN_REFRESH } from "../../../core/plugin-host/refresh.js";
import { redactionModule } from "../../../core/redaction/module.js";
import { REDACTION, type RedactionInput } from "../../../core/redaction/redaction.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { PLUGINS, resolve } from "../../../core/tokens.js";
import { makeSandbox, type Sandbox } from "../plugin-host/sandbox.js";

const PLANTED = "PLANTED-KEY-0123456789";
const input = (text: string): RedactionInput => ({
  text,
  key: "transcript",
  content: true,
  surface: "judge",
  sessionId: "ses_1",
});

let sb: Sandbox;
let c: DependencyContainer;
let logger: ReturnType<typeof createMemoryLogger>;
beforeEach(async () => {
  sb = await makeSandbox();
  await sb.writeConfig({ adapters: [] });
  logger = createMemoryLogger();
  c = await createContainer({ home: sb.home, env: { ...sb.env, ANTHROPIC_API_KEY: PLANTED }, logger });
  for (const m of [pluginHostModule, redactionModule]) await m.start(c);
});
afterEach(async () => {
  await redactionModule.stop!(c);
  await sb.cleanup();
});

describe("a redactor package installed while the daemon runs", () => {
  it("is found at the next forSlug, its output goes through the secrets floor, and one that throws fails closed", async () => {
    const redaction = resolve(c, REDACTION);
    const before = await redaction.forSlug("shout");
    expect(before.carriesContent).toBe(false);
    expect(before.apply(input("hello"))).toBeUndefined();

    await sb.place("install", "svc-fixture-redactor");
    await sb.writeConfig({ adapters: ["svc-fixture-redactor"] });

    const shout = await redaction.forSlug("shout");
    expect(shout.carriesContent).toBe(true);
    expect(shout.apply(input(`hello ${PLANTED}`))).toBe("HELLO [redacted] [judge:transcript] [redacted]");
    expect(resolve(c, PLUGINS).get("redactor", "shout")?.source.package).toBe("svc-fixture-redactor");

    const throws = await redaction.forSlug("throws");
    expect(throws.apply(input("secret text"))).toBeUndefined();
    expect(throws.apply(input("secret text"))).toBeUndefined();
    const warns = logger.lines.filter((l) => l.includes('redactor \\"throws\\" threw'));
    expect(warns).toHaveLength(1);
    expect(logger.lines.join("\n")).not.toContain("secret text");
  });

  it("a refresh with nothing new loads nothing and runs no plugin code", async () => {
    await sb.place("install", "svc-fixture-redactor");
    await sb.writeConfig({ adapters: ["svc-fixture-redactor"] });
    const refresh = resolve(c, PLUGIN_REFRESH);
    expect(await refresh.refresh()).toEqual(["svc-fixture-redactor"]);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) expect(await refresh.refresh()).toEqual([]);
    const perRefreshMs = (performance.now() - t0) / 100;
    console.log(`refresh with nothing new: ${perRefreshMs.toFixed(3)} ms (one listed package)`);
  });
});
