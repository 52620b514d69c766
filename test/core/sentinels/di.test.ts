import { describe, expect, it } from "vitest";
import { registeredClasses } from "../../../core/runtime/inject.js";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { SentinelEngine } from "../../../core/sentinels/engine.js";
import { SentinelStore } from "../../../core/sentinels/store.js";
import { FileCredentialStore } from "../../../core/storage/credentials.js";
import { makeTempHome } from "../../support/cli.js";
import { startHarness } from "./harness.js";

describe("sentinel services through DI", () => {
  it("registers its classes with one @inject token per constructor parameter and resolves them", async () => {
    const { home, cleanup } = await makeTempHome();
    const h = await startHarness(home);
    try {
      for (const cls of [SentinelStore, SentinelDedup, SentinelEngine, FileCredentialStore]) {
        expect(registeredClasses().has(cls)).toBe(true);
        const tokens = Reflect.getOwnMetadata("injectionTokens", cls) ?? {};
        expect(Object.keys(tokens).length, cls.name).toBe(cls.length);
      }
      expect(h.engine).toBeInstanceOf(SentinelEngine);
    } finally {
      await h.stop();
      await cleanup();
    }
  });
});

describe("the engine is one per daemon", () => {
  it("a child container resolves the same engine", async () => {
    const { home, cleanup } = await makeTempHome();
    const h = await startHarness(home);
    try {
      const { SENTINELS, resolve } = await import("../../../core/tokens.js");
      expect(resolve(h.c.createChildContainer(), SENTINELS)).toBe(h.engine);
    } finally {
      await h.stop();
      await cleanup();
    }
  });
});
