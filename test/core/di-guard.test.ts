import "reflect-metadata";
import { describe, expect, it } from "vitest";
import { container, inject, injectable } from "tsyringe";
import { registeredClasses, registerClass, registerValue } from "../../core/runtime/inject.js";
import { token } from "../../core/tokens.js";
import { startDaemon } from "../../core/daemon/daemon.js";
import { createMemoryLogger } from "../../core/runtime/logger.js";
import { makeTempHome } from "../support/cli.js";

const NAME = token<string>("test.name");
const GREETER = token<Greeter>("test.greeter");

@injectable()
class Greeter {
  constructor(@inject(NAME as symbol) private readonly name: string) {}
  greet(): string {
    return `hello ${this.name}`;
  }
}

describe("dependency injection", () => {
  it("resolves a class through the container under the test transform (no decorator metadata)", () => {
    const c = container.createChildContainer();
    registerValue(c, NAME, "svc");
    registerClass(c, GREETER, Greeter);
    expect(c.resolve<Greeter>(GREETER).greet()).toBe("hello svc");
  });

  it("every class the daemon registers declares one @inject token per constructor parameter", async () => {
    const { home, cleanup } = await makeTempHome();
    // The whole daemon, in process: every module registers what it uses.
    const daemon = await startDaemon({ home, env: {}, flags: { port: 0 }, logger: createMemoryLogger() });
    try {
      const classes = [...registeredClasses()];
      expect(classes.length).toBeGreaterThanOrEqual(5);
      for (const cls of classes) {
        const tokens = Reflect.getOwnMetadata("injectionTokens", cls) ?? {};
        expect(Object.keys(tokens).length, `${cls.name} has ${cls.length} constructor parameters`).toBe(cls.length);
      }
    } finally {
      await daemon.stop();
      await cleanup();
    }
  });
});
