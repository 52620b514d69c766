import type { Command } from "commander";

export function registerSessions(_program: Command): void {
  // Filled in by the sessions verb group.
}
