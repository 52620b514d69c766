import type { Command } from "commander";

export function registerConfig(_program: Command): void {
  // Filled in by the config verb group.
}
