import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TEST_TLS } from "../../support/tls.js";

let server: ReturnType<typeof createServer>;
let port: number;

beforeAll(async () => {
  server = createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, (_req, res) => res.end("ok"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it("test workers trust the test CA through NODE_EXTRA_CA_CERTS", async () => {
  const res = await fetch(`https://localhost:${port}/`);
  expect(await res.text()).toBe("ok");
});
