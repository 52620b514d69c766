import type { Command } from "commander";

export function registerWebhooks(_program: Command): void {
  // Filled in by the webhooks verb group.
}
