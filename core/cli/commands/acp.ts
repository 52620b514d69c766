import type { Command } from "commander";

export function registerAcp(_program: Command): void {
  // Filled in by the acp verb group.
}
