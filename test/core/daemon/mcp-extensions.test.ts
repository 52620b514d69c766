/**
 * MCP extensions on /mcp (core/daemon/mcp/extensions.ts), served to clients of both protocol
 * eras: a test extension registered in a daemon (in process: a test-only extension cannot reach
 * a daemon child process) over real HTTP, called with the official SDK clients of both eras: the
 * v1 `@modelcontextprotocol/sdk` client (2025-11-25, `initialize`) and the v2
 * `@modelcontextprotocol/client` (2026-07-28, `server/discover` and the per-request envelope).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { startDaemon, type RunningDaemon } from "../../../core/daemon/daemon.js";
import { mcpModule } from "../../../core/daemon/mcp-module.js";
import type { DaemonModule } from "../../../core/daemon/module.js";
import { MCP_EXTENSIONS, McpRpcError, type McpExtension } from "../../../core/daemon/mcp/extensions.js";
import { SvcError } from "../../../core/errors.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { TOOLS, resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";

const STABLE = "stable-token-for-mcp-extension-tests-0123";
const SESSION_TOKEN = "svc-session-token-for-extension-tests";
const LEAKED = "whsec_dGhpcyBpcyBub3QgYSByZWFsIHNlY3JldCBrZXkgISE=";

const probeExtension: McpExtension = {
  legacyCapability: "probe",
  extensionId: "dev.svc.test/probe",
  settings: { listChanged: false, level: 2 },
  methods: {
    "probe/echo": {
      params: z.strictObject({ text: z.string().min(1), times: z.number().int().positive().optional() }),
      handler: async (params, caller) => {
        const p = params as { text: string; times?: number };
        return {
          echoed: p.text.repeat(p.times ?? 1),
          principal: caller.principal,
          era: caller.era,
          sessionToken: caller.sessionToken ?? null,
        };
      },
    },
    "probe/fail": {
      params: z.object({ kind: z.enum(["rpc", "not_found", "forbidden", "invalid", "conflict", "crash"]) }),
      handler: async (params) => {
        switch ((params as { kind: string }).kind) {
          case "rpc":
            throw new McpRpcError(-32015, "the callback endpoint failed verification", {
              reason: "challenge_failed",
              secret: LEAKED,
            });
          case "not_found":
            throw new SvcError("not_found", "no probe named p1", { details: { kind: "probe" } });
          case "forbidden":
            throw new SvcError("forbidden", "probes are not yours to read");
          case "invalid":
            throw new SvcError("invalid_input", "the probe's depth is out of range", {
              details: [{ path: "depth", message: "at most 3" }],
            });
          case "conflict":
            throw new SvcError("conflict", "the probe is busy");
          default:
            throw new Error(`ENOENT: no such file, open '/home/someone/.svc/private-thing' ${LEAKED}`);
        }
      },
    },
  },
};

const testModule: DaemonModule = {
  name: "test-extension",
  async start(c) {
    resolve(c, MCP_EXTENSIONS).add(probeExtension);
    resolve(c, TOOLS).add({
      name: "whoami",
      description: "The caller's principal",
      inputSchema: {},
      outputSchema: { principal: z.string().describe("the principal") },
      readOnly: true,
      handler: (_input, ctx) => ({ principal: ctx.principal }),
    });
  },
};

const EchoResult = z.object({
  echoed: z.string(),
  principal: z.string(),
  era: z.string(),
  sessionToken: z.string().nullable(),
});
const AnyResult = z.object({}).loose();

interface RpcFailure {
  code: number;
  message: string;
  data?: unknown;
}

describe("MCP extensions on /mcp, for clients of both protocol eras", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let daemon: RunningDaemon;
  let url: URL;
  const logger = createMemoryLogger();

  beforeAll(async () => {
    home = await makeTempHome();
    daemon = await startDaemon({
      home: home.home,
      env: {},
      flags: { port: 0, authToken: STABLE },
      logger,
      modules: [testModule, mcpModule],
    });
    url = new URL("/mcp", `http://127.0.0.1:${daemon.info.port}`);
  });
  afterAll(async () => {
    await daemon?.stop();
    await home?.cleanup();
  });

  const legacy = async (headers: Record<string, string> = {}) => {
    const client = new LegacyClient({ name: "svc-legacy-test", version: "0.0.0" });
    await client.connect(new LegacyTransport(url, { requestInit: { headers } }));
    return client;
  };
  const modern = async (headers: Record<string, string> = {}) => {
    const client = new ModernClient(
      { name: "svc-modern-test", version: "0.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(url, { requestInit: { headers } }));
    return client;
  };
  const failure = async (call: Promise<unknown>): Promise<RpcFailure> => {
    const err = (await call.then(
      () => undefined,
      (e: unknown) => e,
    )) as RpcFailure | undefined;
    expect(err, "the call should have failed").toBeDefined();
    return { code: err!.code, message: err!.message, data: err!.data };
  };

  describe("capabilities", () => {
    it("a 2025-11-25 client is told capabilities[legacyCapability], and no extensions map", async () => {
      // On the wire: the v1 client's getServerCapabilities() keeps only the capability keys it knows.
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
        }),
      });
      const { result } = (await res.json()) as {
        result: { protocolVersion: string; capabilities: Record<string, unknown> };
      };
      expect(result.protocolVersion).toBe("2025-11-25");
      expect(result.capabilities).toEqual({ tools: { listChanged: false }, probe: { listChanged: false, level: 2 } });
    });

    it("a 2026-07-28 client sees capabilities.extensions[extensionId], and on the wire the top-level key public clients still read", async () => {
      // The v2 client keeps only the capability keys it knows: the wire answer is read from its fetch.
      const answers: string[] = [];
      const client = new ModernClient(
        { name: "svc-modern-test", version: "0.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new ModernTransport(url, {
          fetch: async (input, init) => {
            const res = await fetch(input, init);
            answers.push(await res.clone().text());
            return res;
          },
        }),
      );
      expect(client.getServerCapabilities()?.extensions).toEqual({
        "dev.svc.test/probe": { listChanged: false, level: 2 },
      });
      const discover = answers
        .map((a) => JSON.parse(a) as { result?: { capabilities?: Record<string, unknown> } })
        .find((a) => a.result?.capabilities);
      expect(discover?.result?.capabilities).toMatchObject({
        probe: { listChanged: false, level: 2 },
        extensions: { "dev.svc.test/probe": { listChanged: false, level: 2 } },
      });
      await client.close();
    });

    it("a client negotiating automatically lands in the 2026-07-28 era", async () => {
      const client = new ModernClient(
        { name: "svc-auto-test", version: "0.0.0" },
        { versionNegotiation: { mode: "auto" } },
      );
      await client.connect(new ModernTransport(url));
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getServerCapabilities()?.extensions).toHaveProperty("dev.svc.test/probe");
      await client.close();
    });
  });

  describe("a custom method", () => {
    it("called from the v1 client runs with the request's principal, session token and the legacy era", async () => {
      const client = await legacy({ authorization: `Bearer ${STABLE}`, "x-svc-session-token": SESSION_TOKEN });
      const out = await client.request({ method: "probe/echo", params: { text: "ab", times: 2 } }, EchoResult);
      expect(out).toEqual({ echoed: "abab", principal: "token:stable", era: "legacy", sessionToken: SESSION_TOKEN });
      await client.close();
    });

    it("called from the v2 client runs with the modern era (and `_meta` is not taken for a param)", async () => {
      const client = await modern();
      const out = await client.request(
        {
          method: "probe/echo",
          params: { text: "cd", _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } },
        },
        EchoResult,
      );
      expect(out).toMatchObject({ echoed: "cd", principal: "loopback", era: "modern", sessionToken: null });
      await client.close();
    });

    it("tools are served to the modern client too, with the request's principal", async () => {
      const client = await modern({ authorization: `Bearer ${STABLE}` });
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["whoami"]);
      expect((await client.callTool({ name: "whoami", arguments: {} })).structuredContent).toEqual({
        principal: "token:stable",
      });
      await client.close();
    });
  });

  describe("errors reach both clients with their codes and data", () => {
    /** A custom request from either client (their `request` signatures differ only in type). */
    interface Caller {
      request(method: string, params: Record<string, unknown>): Promise<unknown>;
      close(): Promise<void>;
    }
    interface SdkClient {
      request(
        request: { method: string; params: Record<string, unknown> },
        resultSchema: typeof AnyResult,
      ): Promise<unknown>;
      close(): Promise<void>;
    }
    const caller = (c: SdkClient): Caller => ({
      request: (method, params) => c.request({ method, params }, AnyResult),
      close: () => c.close(),
    });
    const clients: Array<[string, () => Promise<Caller>]> = [
      ["v1 (2025-11-25)", async () => caller(await legacy())],
      ["v2 (2026-07-28)", async () => caller(await modern())],
    ];

    it.each(clients)("%s: params failing the method's schema: -32602 with reason and details", async (_name, open) => {
      const client = await open();
      const err = await failure(client.request("probe/echo", { text: "", extra: 1 }));
      expect(err.code).toBe(-32602);
      expect(err.message).toMatch(/probe\/echo/);
      expect(err.data).toEqual({
        reason: "invalid_params",
        details: expect.arrayContaining([
          expect.objectContaining({ path: "text" }),
          expect.objectContaining({ path: "(root)", message: expect.stringMatching(/extra/) }),
        ]),
      });
      await client.close();
    });

    it.each(clients)("%s: an McpRpcError keeps its code, message and data (secrets redacted)", async (_name, open) => {
      const client = await open();
      const err = await failure(client.request("probe/fail", { kind: "rpc" }));
      expect(err).toMatchObject({
        code: -32015,
        message: expect.stringMatching(/callback endpoint failed verification/),
        data: { reason: "challenge_failed", secret: "[redacted]" },
      });
      expect(JSON.stringify(err)).not.toContain(LEAKED);
      await client.close();
    });

    it.each(clients)("%s: SvcErrors map to the codes of the same meaning", async (_name, open) => {
      const client = await open();
      const call = (kind: string) => failure(client.request("probe/fail", { kind }));
      expect(await call("not_found")).toMatchObject({
        code: -32011,
        message: expect.stringMatching(/no probe named p1/),
        data: { reason: "not_found", details: { kind: "probe" } },
      });
      expect(await call("forbidden")).toMatchObject({ code: -32012, data: { reason: "forbidden" } });
      expect(await call("invalid")).toMatchObject({
        code: -32602,
        data: { reason: "invalid_params", details: [{ path: "depth", message: "at most 3" }] },
      });
      expect(await call("conflict")).toMatchObject({
        code: -32603,
        message: expect.stringMatching(/the probe is busy/),
        data: { reason: "conflict" },
      });
      await client.close();
    });

    it.each(clients)(
      "%s: anything else is -32603 with a generic message; the log has the cause",
      async (_name, open) => {
        const client = await open();
        const err = await failure(client.request("probe/fail", { kind: "crash" }));
        expect(err.code).toBe(-32603);
        expect(err.message).toMatch(/internal error; the daemon log has the cause/);
        expect(JSON.stringify(err)).not.toMatch(/private-thing|whsec_/);
        expect(
          logger.lines.some(
            (l) => l.includes("extension method failed") && l.includes("probe/fail") && l.includes("private-thing"),
          ),
        ).toBe(true);
        await client.close();
      },
    );

    it("an unknown method is -32601 (for the modern client, in an HTTP 404 as the 2026-07-28 transport says)", async () => {
      const v1 = await legacy();
      expect(await failure(v1.request({ method: "probe/nope", params: {} }, AnyResult))).toMatchObject({
        code: -32601,
      });
      await v1.close();
      const v2 = await modern();
      const err = await failure(v2.request({ method: "probe/nope", params: {} }, AnyResult));
      expect(err.data).toMatchObject({ status: 404, text: expect.stringContaining('"code":-32601') });
      await v2.close();
    });
  });
});
