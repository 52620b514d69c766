/**
 * The commander program. One file per verb group registers its commands; each command imports
 * its implementation lazily inside the action, so `svc --help` stays fast.
 */
import type { Command } from "commander";
import { SVC_VERSION } from "../version.js";
import { programShell, runProgram } from "./program-shell.js";
import { registerServe } from "./commands/serve.js";
import { registerConfig } from "./commands/config.js";
import { registerAdapters } from "./commands/adapters.js";
import { registerSentinel } from "./commands/sentinel.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { registerSessions } from "./commands/sessions.js";
import { registerAcp } from "./commands/acp.js";
import { registerWorktree } from "./commands/worktree.js";
import { registerSwarm } from "./commands/swarm.js";
import { registerPair } from "./commands/pair.js";
import { registerRelay } from "./commands/relay.js";
import { registerTunnel } from "./commands/tunnel.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerStatus } from "./commands/status.js";
import { registerLifecycle } from "./commands/lifecycle.js";
import { registerOpen } from "./commands/open.js";
import { registerLlmEndpoint } from "./commands/llm-endpoint.js";
import { registerService } from "./commands/service.js";
import { registerCompletion } from "./commands/completion.js";
import { registerStore } from "./commands/store.js";

export function buildProgram(options: { jsonErrors?: boolean } = {}): Command {
  const program = programShell(options);
  for (const register of [
    registerServe,
    registerConfig,
    registerAdapters,
    registerSentinel,
    registerWebhooks,
    registerSessions,
    registerAcp,
    registerWorktree,
    registerSwarm,
    registerPair,
    registerRelay,
    registerTunnel,
    registerLlmEndpoint,
    registerDoctor,
    registerStatus,
    registerLifecycle,
    registerStore,
    registerService,
    registerCompletion,
    registerOpen,
  ]) {
    register(program);
  }
  program
    .command("version")
    .description("Print svc's version (the same as --version)")
    .action(() => void process.stdout.write(`${SVC_VERSION}\n`));
  return program;
}

/** Runs the CLI; returns the exit code (0 success, 1 failure, 2 usage error). */
export function runCli(argv: string[]): Promise<number> {
  return runProgram(argv, (json) => buildProgram({ jsonErrors: json }));
}
