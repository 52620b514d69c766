/**
 * What an idle daemon has not loaded (docs/architecture.md, "What loads when"): a room a feature
 * needs loads when that feature is first used. The daemon runs with a module hook that logs every
 * ES module it loads (test/fixtures/scripts/load-log.mjs); after start the heavy rooms are absent,
 * and each appears once its feature is used.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { writeBenchSentinels } from "../bench/daemon.js";
import { useDaemonProcess } from "../support/cli.js";
import { FIXTURES } from "../support/paths.js";
import { until } from "../support/until.js";

const HOOK = pathToFileURL(join(FIXTURES, "scripts/load-log.mjs")).href;

/** Loaded only when their feature is first used; a pattern matches a loaded module's URL. */
const LAZY: Record<string, RegExp> = {
  "undici (the egress client)": /\/node_modules\/undici\//,
  "the MCP server SDK": /\/node_modules\/@modelcontextprotocol\/server\//,
  "the MCP server builder": /\/core\/daemon\/mcp\/build-server\.js$/,
  "the ACP SDK": /\/node_modules\/@agentclientprotocol\/sdk\//,
  "the ACP session": /\/plugins\/acp\/acp-session\.js$/,
  "the swarm run service": /\/core\/swarm\/service\.js$/,
  // Registered for a package's plugins only: its loader thread has a V8 heap of its own (about 9 MiB).
  "the plugin API's module hooks": /\/core\/plugin-host\/api-hooks\.js$/,
  "the CLI's verb groups other than serve": /\/core\/cli\/commands\/(?!serve\.js$)[^/]+\.js$/,
  // Team mode only (store.url is postgres://…): a daemon on the files never loads them.
  "pg (the team store's client)": /\/node_modules\/pg(-[a-z]+)?\//,
  "graphile-worker (the team's job queue)": /\/node_modules\/graphile-worker\//,
  "the team store": /\/core\/store\/postgres\//,
};

describe("an idle daemon with webhook sentinels stored", () => {
  let log = "";
  const fx = useDaemonProcess({
    setup: async ({ home }) => {
      log = join(home, "loaded-modules.txt");
      await writeFile(log, "");
      await writeBenchSentinels(home, 3, (i) => ({
        kind: "webhook",
        url: `https://127.0.0.1:9/hook/${i}`,
        secret: `whsec_${"A".repeat(43)}=`,
      }));
      const inherited = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : "";
      return { env: { NODE_OPTIONS: `${inherited}--import=${HOOK}`, SVC_TEST_LOAD_LOG: log } };
    },
  });
  const loaded = async () => (await readFile(log, "utf8")).split("\n").filter(Boolean);
  const hasLoaded = (pattern: RegExp) => async () => ((await loaded()).some((u) => pattern.test(u)) ? true : undefined);

  it("has not loaded the rooms of features not used yet", async () => {
    expect((await fx.daemon.fetch("/health")).status).toBe(200);
    const urls = await loaded();
    // The hook sees the daemon's own modules and the webhook target that holds the sentinels' deliveries.
    expect(urls.some((u) => u.endsWith("/core/daemon/daemon.js"))).toBe(true);
    expect(urls.some((u) => u.endsWith("/plugins/webhook-target/index.js"))).toBe(true);
    const early = Object.entries(LAZY).filter(([, pattern]) => urls.some((u) => pattern.test(u)));
    expect(early.map(([name]) => name)).toEqual([]);
  });

  it("loads the MCP server at the first /mcp request", async () => {
    const client = new Client({ name: "svc-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    await until(hasLoaded(LAZY["the MCP server SDK"]!), "the MCP server SDK to load");
  });

  it("loads the swarm run service at the first swarm call", async () => {
    const res = await fx.daemon.fetch("/swarm/runs");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ runs: [] });
    await until(hasLoaded(LAZY["the swarm run service"]!), "the swarm run service to load");
  });
});
