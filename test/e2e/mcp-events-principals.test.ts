/**
 * Issue 42, finding 5: a token-less loopback process polls MCP events under a key of its own, so
 * it cannot spend the owner's poll leases. A real daemon, the official MCP SDK client: 100
 * token-less leases (the most one key holds), then the owner's poll (bearer token) still opens one.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MCP_EVENTS_LIMITS as L } from "../../core/mcp-events/limits.js";
import { useDaemonProcess } from "../support/cli.js";

const anyResult = z.looseObject({});

describe("MCP events/poll leases: a token-less loopback caller is not the owner", () => {
  const fx = useDaemonProcess({ prefix: "svc-e2e-mcp-principals-" });
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  const connect = async (token?: string) => {
    const client = new Client({ name: "svc-e2e-principals", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL("/mcp", fx.daemon.baseUrl),
        token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined,
      ),
    );
    clients.push(client);
    return client;
  };
  const poll = (client: Client, subject: string) =>
    client.request(
      { method: "events/poll", params: { name: "agentpush.event", arguments: { subject }, cursor: null } } as never,
      anyResult,
    ) as Promise<Record<string, unknown>>;

  it(`${L.pollLeasesPerPrincipal} token-less leases leave the owner's poll alone`, async () => {
    const local = await connect();
    for (let i = 0; i < L.pollLeasesPerPrincipal; i++) await poll(local, `ci:local-${i}`);
    // The token-less key is full: its next new lease is refused, as the cap says.
    const refused = await poll(local, "ci:local-one-more").catch((err: unknown) => err);
    expect(refused).toMatchObject({
      code: -32013,
      message: expect.stringMatching(/every local caller without a token shares these: send the bearer token/),
      data: { limit: "pollLeases", max: L.pollLeasesPerPrincipal },
    });

    const owner = await connect(fx.daemon.token);
    expect(await poll(owner, "ci:owner")).toMatchObject({ events: [], truncated: false, cursor: expect.any(String) });
  });
});
