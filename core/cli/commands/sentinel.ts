import type { Command } from "commander";

export function registerSentinel(_program: Command): void {
  // Filled in by the sentinel verb group.
}
