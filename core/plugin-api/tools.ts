import type { z } from "zod";

export interface ToolCallContext {
  principal: string;
}

/** An MCP tool served on `/mcp`. `inputSchema` is a zod raw shape (an object's fields). */
export interface ToolDef<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title?: string;
  description: string;
  inputSchema: Shape;
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
