import type { z } from "zod";
import type { ToolDef, ToolRegistry } from "../plugin-api/tools.js";
import { SvcError } from "../errors.js";

/** The MCP tools the daemon serves on `/mcp`: core tools and those plugins add. */
export class ToolTable implements ToolRegistry {
  private readonly tools = new Map<string, ToolDef>();

  add<Shape extends z.ZodRawShape>(tool: ToolDef<Shape>): void {
    if (this.tools.has(tool.name)) throw new SvcError("conflict", `tool ${tool.name} is already registered`);
    this.tools.set(tool.name, tool as unknown as ToolDef);
  }

  list(): ReadonlyArray<ToolDef> {
    return [...this.tools.values()];
  }
}
