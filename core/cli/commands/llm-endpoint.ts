import type { Command } from "commander";

/** `svc llm-endpoint status | usage | start | stop` (docs/llm-endpoint.md). */
export function registerLlmEndpoint(program: Command): void {
  const cmd = program
    .command("llm-endpoint")
    .description(
      "The model proxy sidecar (features.llmEndpoint): its state, the usage it counted, start and stop (docs/llm-endpoint.md)",
    );
  const verbs = () => import("../../llm-endpoint/cli/verbs.js");
  cmd
    .command("status")
    .description("Show the sidecar's state, URL, restarts, routes (where each key comes from, never a key)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => (await verbs()).llmStatus(opts));
  cmd
    .command("usage")
    .description("Show model usage: today's totals (UTC), per session and per swarm run")
    .option("--session <id>", "only this session")
    .option("--run <id>", "only this swarm run")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean; session?: string; run?: string }) => (await verbs()).llmUsage(opts));
  for (const verb of ["start", "stop"] as const) {
    cmd
      .command(verb)
      .description(
        verb === "start"
          ? "Start the sidecar (features.llmEndpoint must be on)"
          : "Stop the sidecar until started again or the daemon restarts",
      )
      .option("--json", "machine-readable output")
      .action(async (opts: { json?: boolean }) => (await verbs()).llmControl(verb, opts));
  }
}
