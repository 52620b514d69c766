import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainer } from "../../../core/container.js";
import { egressModule } from "../../../core/egress/module.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { CONFIG, EGRESS, SERVICES, resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";
import { failure, startReceiver, type Receiver } from "../../support/https-receiver.js";

let home: string;
let cleanup: () => Promise<void>;
let rx: Receiver;
let logger: ReturnType<typeof createMemoryLogger>;
let c: DependencyContainer;

const writeConfig = (allowSubnets: string[]) =>
  writeFile(join(home, "config.json"), JSON.stringify({ webhooks: { allowSubnets } }));
const warnings = () =>
  logger.lines
    .map((l) => JSON.parse(l) as { level: string; msg: string })
    .filter((l) => l.level === "warn" && l.msg.includes("allowSubnets"));
const postAs = (host: DependencyContainer) =>
  resolve(host, SERVICES)
    .get("egress")
    .post(`https://127.0.0.1:${rx.port}/`, { headers: {}, body: "{}", timeoutMs: 5_000 });

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-egress-module-"));
  rx = await startReceiver();
  logger = createMemoryLogger();
});
afterEach(async () => {
  await egressModule.stop?.(c);
  await rx.close();
  await cleanup();
});

describe("the egress module: one host gate for every plugin", () => {
  it('offers the host egress as the service "egress" and warns once at start while allowSubnets is non-empty', async () => {
    await writeConfig(["127.0.0.0/8"]);
    c = await createContainer({ home, env: {}, logger });
    expect(resolve(c, SERVICES).get("egress")).toBe(resolve(c, EGRESS));
    await egressModule.start(c);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.msg).toContain("127.0.0.0/8");
    for (let i = 0; i < 3; i++) expect((await postAs(c)).status).toBe(200);
    expect(warnings()).toHaveLength(1);
  });

  it("says nothing at start with an empty list, and refuses loopback", async () => {
    c = await createContainer({ home, env: {}, logger });
    await egressModule.start(c);
    expect(warnings()).toEqual([]);
    expect((await failure(postAs(c))).code).toBe("private_target");
  });

  it("uses the new list after a config reload changes it, and keeps working after a reload to the same list", async () => {
    c = await createContainer({ home, env: {}, logger });
    await egressModule.start(c);
    expect((await failure(postAs(c))).code).toBe("private_target");
    await writeConfig(["127.0.0.1/32"]);
    expect((await resolve(c, CONFIG).reload()).ok).toBe(true);
    expect(resolve(c, EGRESS).allowSubnets).toEqual(["127.0.0.1/32"]);
    expect(warnings()).toHaveLength(1);
    expect((await postAs(c)).status).toBe(200);
    expect((await resolve(c, CONFIG).reload()).ok).toBe(true);
    expect(warnings()).toHaveLength(1);
    await writeConfig([]);
    await resolve(c, CONFIG).reload();
    expect((await failure(postAs(c))).code).toBe("private_target");
  });

  it("stops following the configuration at stop", async () => {
    c = await createContainer({ home, env: {}, logger });
    await egressModule.start(c);
    await egressModule.stop!(c);
    await writeConfig(["127.0.0.1/32"]);
    await resolve(c, CONFIG).reload();
    expect(resolve(c, EGRESS).allowSubnets).toBeUndefined();
  });
});
