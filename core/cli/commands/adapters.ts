import type { Command } from "commander";

export function registerAdapters(_program: Command): void {
  // Filled in by the adapters verb group.
}
