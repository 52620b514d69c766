import type { z } from "zod";

export interface ToolCallContext {
  principal: string;
  /** The `X-Svc-Session-Token` the caller presented: a session's own token (its SVC_SESSION_TOKEN), from which the daemon derives the calling session. */
  sessionToken?: string;
}

/**
 * An MCP tool served on `/mcp`. `inputSchema` is a zod raw shape (an object's fields); arguments
 * it does not name are refused, as REST refuses unknown fields. Describe every field.
 */
export interface ToolDef<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title?: string;
  description: string;
  inputSchema: Shape;
  /**
   * The shape of a successful result (an object: it becomes the call's `structuredContent`),
   * advertised to MCP clients and checked by the SDK. Every built-in tool declares one.
   */
  outputSchema?: z.ZodRawShape;
  /** Read-only tools are annotated as such for MCP clients. */
  readOnly?: boolean;
  /**
   * `token`: only a caller that presented the daemon's bearer token may call it, even from
   * loopback (what widens reach: outbound deliveries, secrets). Default: whoever may call /mcp.
   */
  requires?: "token";
  handler(input: z.infer<z.ZodObject<Shape>>, ctx: ToolCallContext): Promise<unknown> | unknown;
}

export interface ToolRegistry {
  add<Shape extends z.ZodRawShape>(tool: ToolDef<Shape>): void;
  list(): ReadonlyArray<ToolDef>;
}
