/**
 * Builds the registered MCP extensions into one server: each one's capability, advertised the way
 * the caller's protocol era expects (2025-era: `capabilities[legacyCapability]`; 2026-07-28:
 * `capabilities.extensions[extensionId]`, and the top-level key too, which public clients of that
 * revision still read), and each of its methods as a request handler that
 * validates the params with the method's schema, runs with the caller's principal and maps what
 * it throws to a JSON-RPC error (./rpc-error.ts).
 */
import type { Server } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { McpCallerContext, McpExtension } from "./extensions.js";
import { invalidParams, toRpcError } from "./rpc-error.js";

/** The SDK's own check of a custom method's params: any object (the method's schema is applied here, for its error's data). */
const ANY_PARAMS = z.looseObject({});

export function attachExtensions(
  server: Server,
  extensions: readonly McpExtension[],
  caller: McpCallerContext,
  onInternal?: (method: string, err: unknown) => void,
): void {
  if (extensions.length === 0) return;
  // Public 2026-07-28 clients still read the top-level key (the AI SDK's experimental_events checks
  // `capabilities.events` whatever the revision), so modern callers get both shapes.
  const legacy = Object.fromEntries(extensions.map((e) => [e.legacyCapability, e.settings]));
  server.registerCapabilities(
    caller.era === "modern"
      ? { ...legacy, extensions: Object.fromEntries(extensions.map((e) => [e.extensionId, e.settings])) }
      : legacy,
  );
  for (const extension of extensions) {
    for (const [method, def] of Object.entries(extension.methods)) {
      server.setRequestHandler(method, { params: ANY_PARAMS }, async (raw) => {
        const { _meta: _ignored, ...params } = raw;
        const parsed = def.params.safeParse(params);
        if (!parsed.success) throw invalidParams(method, parsed.error.issues);
        try {
          return await def.handler(parsed.data, caller);
        } catch (err) {
          throw toRpcError(err, onInternal && ((e) => onInternal(method, e)));
        }
      });
    }
  }
}
