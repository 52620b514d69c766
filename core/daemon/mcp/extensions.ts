/**
 * MCP extensions served on `/mcp` beside the tools: a capability advertised the way the client's
 * protocol revision expects, and JSON-RPC methods of their own (e.g. the events extension's
 * `events/list`, `events/subscribe`, ...). A core module adds one to {@link MCP_EXTENSIONS}; the
 * `/mcp` route builds it into every server it makes.
 */
import type { z } from "zod";
import { token } from "../../tokens.js";

/** What an extension method knows of its caller (the same principal rule as tools). */
export interface McpCallerContext {
  /** The request's principal (core/daemon/principal.ts). */
  principal: string;
  /** A session token presented with the request (`X-Svc-Session-Token`), if any. */
  sessionToken?: string;
  /** `modern` for 2026-07-28 (per-request envelope) traffic, `legacy` for 2025-era traffic. */
  era: "legacy" | "modern";
}

export interface McpExtensionMethod {
  /** Validates `params` (minus `_meta`); a failure answers -32602 with `data.reason`. */
  params: z.ZodType;
  /** The result object. Throw {@link McpRpcError} for a JSON-RPC error with a code of its own. */
  handler(params: unknown, caller: McpCallerContext): Promise<Record<string, unknown>>;
}

export interface McpExtension {
  /** 2025-11-25 and earlier: advertised as `capabilities[legacyCapability]` (e.g. `events`). */
  legacyCapability: string;
  /** 2026-07-28: advertised as `capabilities.extensions[extensionId]` (e.g. `io.modelcontextprotocol/events`). */
  extensionId: string;
  /** The settings object advertised under either key (e.g. `{listChanged: false}`). */
  settings: Record<string, unknown>;
  /** JSON-RPC method name -> handler. */
  methods: Record<string, McpExtensionMethod>;
}

/** JSON-RPC codes every extension shares (-32011/-32012: the events sketch's general-purpose ones). */
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const NOT_FOUND = -32011;
export const FORBIDDEN = -32012;

/** A JSON-RPC error with a code of its own (e.g. the events extension's -32011..-32015). */
export class McpRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "McpRpcError";
  }
}

export interface McpExtensionRegistry {
  add(extension: McpExtension): void;
  list(): readonly McpExtension[];
}

export function createMcpExtensionRegistry(): McpExtensionRegistry {
  const all: McpExtension[] = [];
  return {
    add(extension) {
      if (all.some((e) => e.extensionId === extension.extensionId))
        throw new Error(`MCP extension ${extension.extensionId} is registered twice`);
      all.push(extension);
    },
    list: () => all,
  };
}

export const MCP_EXTENSIONS = token<McpExtensionRegistry>("mcp-extensions");
