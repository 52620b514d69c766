/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for the daemon, and the bearer challenge
 * (RFC 6750 §3) that every 401 carries, pointing at it.
 *
 * svc is a protected resource with no authorization server: its bearer tokens (the per-boot token
 * of runtime.json, `daemon.authToken`) are issued out of band, so the documents name no
 * `authorization_servers`; they say only that a bearer token goes in the `Authorization` header.
 * Two documents (RFC 9728 §3.1): the daemon's, whose `resource` is its base URL, and `/mcp`'s, at
 * the path-suffixed well-known URL, whose `resource` is the `/mcp` URL (what an MCP client uses as
 * the resource identifier). Both are built from the request's Host: the daemon's own origin.
 */
import type { IncomingMessage } from "node:http";
import type { DependencyContainer } from "tsyringe";
import { ROUTES, resolve } from "../tokens.js";
import type { DaemonModule } from "./module.js";
import { ownOrigin } from "./own-origin.js";

export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/** Resources with a document of their own (path-suffixed); every other path is the daemon's. */
const RESOURCES = ["/mcp"] as const;

/** The resource a request path belongs to: `/mcp` for `/mcp`, `""` (the daemon) otherwise. */
function resourcePathOf(path: string): string {
  return RESOURCES.find((r) => path === r || path.startsWith(`${r}/`)) ?? "";
}

export interface ResourceMetadata {
  resource: string;
  bearer_methods_supported: ["header"];
  resource_name: string;
}

export function resourceMetadata(origin: string, resourcePath: string): ResourceMetadata {
  return {
    resource: `${origin}${resourcePath}`,
    bearer_methods_supported: ["header"],
    resource_name: resourcePath === "/mcp" ? "svc daemon MCP server" : "svc daemon",
  };
}

/**
 * The `WWW-Authenticate` value of a 401 answering `req` for `path`: `Bearer realm="svc"`, the
 * metadata URL of the resource the path belongs to, and `error="invalid_token"` when the request
 * presented a token that was refused (RFC 6750 §3.1: no error code when none was presented).
 */
export function bearerChallenge(req: IncomingMessage, path: string, invalidToken: boolean): string {
  const metadata = `${ownOrigin(req)}${RESOURCE_METADATA_PATH}${resourcePathOf(path)}`;
  return `Bearer realm="svc", resource_metadata="${metadata}"${invalidToken ? ', error="invalid_token"' : ""}`;
}

/** The metadata documents: open (they are what a client reads before it has a token), cacheable. */
export const resourceMetadataModule: DaemonModule = {
  name: "resource-metadata",
  async start(c: DependencyContainer) {
    const routes = resolve(c, ROUTES);
    for (const resourcePath of ["", ...RESOURCES]) {
      routes.add({
        method: "GET",
        path: `${RESOURCE_METADATA_PATH}${resourcePath}`,
        auth: "open",
        handler: (req) => ({
          status: 200,
          headers: { "cache-control": "public, max-age=3600" },
          body: resourceMetadata(ownOrigin(req.raw), resourcePath),
        }),
      });
    }
  },
};
