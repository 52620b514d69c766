import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHostEgress, type HostEgress } from "../../../core/egress/host-egress.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import {
  failure,
  LOOPBACK_ALLOWED,
  startReceiver,
  tableResolver,
  type Receiver,
} from "../../support/https-receiver.js";

const resolver = tableResolver({ "receiver.test": ["127.0.0.1"] });
const json = { "content-type": "application/json" };

let rx: Receiver;
let list: readonly string[];
let logger: ReturnType<typeof createMemoryLogger>;
let egress: HostEgress;

const post = () =>
  egress.post(`https://receiver.test:${rx.port}/hook`, { headers: json, body: "{}", timeoutMs: 5_000 });
const logged = () =>
  logger.lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level !== "debug");

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(await check()).toBe(true);
}

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());
beforeEach(() => {
  rx.seen.length = 0;
  list = [];
  logger = createMemoryLogger();
  egress = createHostEgress({ allowSubnets: () => list, resolver, logger });
});
afterEach(() => egress.close());

describe("host egress: follows the effective webhooks.allowSubnets", () => {
  it("applies the list the configuration has at each request", async () => {
    expect((await failure(post())).code).toBe("private_target");
    list = LOOPBACK_ALLOWED;
    expect((await post()).status).toBe(200);
    expect(egress.allowSubnets).toEqual(LOOPBACK_ALLOWED);
    list = ["10.0.0.0/8"];
    expect((await failure(post())).code).toBe("private_target");
    expect(rx.seen).toHaveLength(1);
  });

  it("closes the old client when the list changes (its kept-alive connections end)", async () => {
    const own = await startReceiver();
    try {
      const postOwn = () =>
        egress.post(`https://receiver.test:${own.port}/`, { headers: json, body: "{}", timeoutMs: 5_000 });
      list = ["127.0.0.0/8"];
      await postOwn();
      await postOwn();
      expect(await own.connections()).toBeGreaterThanOrEqual(1);
      list = ["127.0.0.1/32"];
      await postOwn();
      const before = own.seen.slice(0, 2).map((s) => s.remotePort);
      expect(before).not.toContain(own.seen[2]!.remotePort);
      await eventually(async () => (await own.connections()) === 1);
    } finally {
      await own.close();
    }
  });

  it("warns once per list (at the build, not per request) and says when the list changed", async () => {
    egress.refresh();
    expect(logged()).toEqual([]);
    list = LOOPBACK_ALLOWED;
    egress.refresh();
    egress.refresh();
    await post();
    await post();
    expect(logged()).toMatchObject([
      { level: "info", msg: expect.stringContaining("allowSubnets changed") },
      { level: "warn", msg: expect.stringContaining("127.0.0.0/8, ::1/128") },
    ]);
  });

  it("keeps the client when the list comes back as a new array with the same entries", async () => {
    list = LOOPBACK_ALLOWED;
    await post();
    list = [...LOOPBACK_ALLOWED];
    await post();
    egress.refresh();
    expect(logged().filter((l) => l.msg.includes("allowSubnets changed"))).toEqual([]);
  });

  it("builds again after close", async () => {
    list = LOOPBACK_ALLOWED;
    expect((await post()).status).toBe(200);
    await egress.close();
    expect(egress.allowSubnets).toBeUndefined();
    expect((await post()).status).toBe(200);
  });
});
