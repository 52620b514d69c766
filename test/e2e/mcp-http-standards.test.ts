/**
 * MCP over HTTP as the specification and the RFCs say, against a real daemon process and the
 * official MCP SDK client: the bearer challenge of a 401 (RFC 6750 §3, RFC 9728 §5.1), the
 * protected-resource metadata (RFC 9728 §3), `Allow` on a 405 (RFC 9110 §15.5.6) and the daemon's
 * own origin accepted on a state-changing request while a foreign one is still refused.
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { useDaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";

const STABLE = "stable-token-for-mcp-http-standards";
/** A forwarded caller: never taken for a loopback one, so it needs the token. */
const XFF = { "x-forwarded-for": "203.0.113.7" };
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "svc-test", version: "0.0.0" } },
});
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function connect(url: URL, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "svc-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

describe("MCP over HTTP: standard headers and same-origin requests", () => {
  const fx = useDaemonProcess({ prefix: "svc-mcp-http-", config: { daemon: { authToken: STABLE } } });
  const base = () => fx.daemon.baseUrl;
  const mcpUrl = () => new URL("/mcp", base());
  const postMcp = (headers: Record<string, string>) =>
    fetch(mcpUrl(), { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: INITIALIZE });

  describe("401 (RFC 6750 §3, RFC 9728 §5.1)", () => {
    it("without a token: a Bearer challenge naming /mcp's metadata document, and no error code", async () => {
      await expect(connect(mcpUrl(), XFF)).rejects.toMatchObject({ code: 401 });
      const res = await postMcp(XFF);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(
        `Bearer realm="svc", resource_metadata="${base()}/.well-known/oauth-protected-resource/mcp"`,
      );
      const params = extractWWWAuthenticateParams(res);
      expect(params.resourceMetadataUrl?.href).toBe(`${base()}/.well-known/oauth-protected-resource/mcp`);
      expect(params.error).toBeUndefined();
    });

    it('with a wrong token: error="invalid_token", from a forwarded caller and from loopback alike', async () => {
      for (const headers of [
        { ...XFF, authorization: "Bearer wrong-token" },
        { authorization: "Bearer wrong-token" },
      ]) {
        await expect(connect(mcpUrl(), headers)).rejects.toMatchObject({ code: 401 });
        const res = await postMcp(headers);
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe(
          `Bearer realm="svc", resource_metadata="${base()}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
        );
        expect(extractWWWAuthenticateParams(res).error).toBe("invalid_token");
        expect(res.headers.get("www-authenticate")).not.toContain("wrong-token");
      }
    });

    it("on a REST route: the daemon's own metadata document, built from the Host the request named", async () => {
      const res = await rawRequest(fx.daemon.port, {
        method: "POST",
        path: "/heartbeat/tick",
        headers: { ...XFF, host: `localhost:${fx.daemon.port}` },
      });
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe(
        `Bearer realm="svc", resource_metadata="http://localhost:${fx.daemon.port}/.well-known/oauth-protected-resource"`,
      );
    });

    it("the right token still passes", async () => {
      const client = await connect(mcpUrl(), { ...XFF, authorization: `Bearer ${STABLE}` });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
    });
  });

  describe("protected-resource metadata (RFC 9728 §3)", () => {
    it("/mcp's document, found by the SDK's discovery from the /mcp URL, open to callers without a token", async () => {
      const doc = await discoverOAuthProtectedResourceMetadata(mcpUrl(), {}, (url, init) =>
        fetch(url, { ...init, headers: { ...XFF } }),
      );
      expect(doc).toEqual({
        resource: `${base()}/mcp`,
        bearer_methods_supported: ["header"],
        resource_name: "svc daemon MCP server",
      });
      expect(doc.authorization_servers).toBeUndefined();
    });

    it("the challenge's URL and the daemon's own document; both cacheable", async () => {
      const challenge = extractWWWAuthenticateParams(await postMcp(XFF));
      expect(
        (
          await discoverOAuthProtectedResourceMetadata(mcpUrl(), {
            resourceMetadataUrl: challenge.resourceMetadataUrl!,
          })
        ).resource,
      ).toBe(`${base()}/mcp`);
      const res = await fetch(`${base()}/.well-known/oauth-protected-resource`, { headers: XFF });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
      expect(await res.json()).toEqual({
        resource: base(),
        bearer_methods_supported: ["header"],
        resource_name: "svc daemon",
      });
    });
  });

  describe("405 (RFC 9110 §15.5.6)", () => {
    it.each([
      ["GET", "/mcp", "POST"],
      ["DELETE", "/mcp", "POST"],
      ["DELETE", "/health", "GET"],
      ["PUT", "/sentinels", "POST, GET"],
      ["POST", "/.well-known/oauth-protected-resource", "GET"],
    ])("%s %s answers 405 with Allow: %s", async (method, path, allow) => {
      const res = await rawRequest(fx.daemon.port, { method, path });
      expect(res.status).toBe(405);
      expect(res.json().error.code).toBe("method_not_allowed");
      expect(res.headers["allow"]).toBe(allow);
    });
  });

  describe("Origin on POST /mcp", () => {
    it("the daemon's own origin is accepted (the MCP SDK client, and a localhost Host)", async () => {
      const client = await connect(mcpUrl(), { origin: base() });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
      const host = `localhost:${fx.daemon.port}`;
      const res = await rawRequest(fx.daemon.port, {
        method: "POST",
        path: "/mcp",
        headers: { ...MCP_HEADERS, host, origin: `http://${host}` },
        body: INITIALIZE,
      });
      expect(res.status).toBe(200);
      expect(res.json().result.serverInfo.name).toBe("svc");
    });

    it("a foreign origin, or the same host on another port, still gets 403", async () => {
      await expect(connect(mcpUrl(), { origin: "http://evil.example" })).rejects.toMatchObject({ code: 403 });
      for (const origin of [
        "http://evil.example",
        `http://127.0.0.1:${fx.daemon.port + 1}`,
        `https://127.0.0.1:${fx.daemon.port}`,
      ]) {
        const res = await postMcp({ origin });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
      }
    });

    it("a rebound name whose Origin matches its Host is refused (DNS rebinding)", async () => {
      const host = `rebind.example:${fx.daemon.port}`;
      const res = await rawRequest(fx.daemon.port, {
        method: "POST",
        path: "/mcp",
        headers: { ...MCP_HEADERS, host, origin: `http://${host}` },
        body: INITIALIZE,
      });
      expect(res.status).toBe(403);
    });

    it("the same holds on REST routes", async () => {
      expect((await fetch(`${base()}/heartbeat/tick`, { method: "POST", headers: { origin: base() } })).status).toBe(
        200,
      );
      expect(
        (await fetch(`${base()}/heartbeat/tick`, { method: "POST", headers: { origin: "http://evil.example" } }))
          .status,
      ).toBe(403);
    });
  });
});
