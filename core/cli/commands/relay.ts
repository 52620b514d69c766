import { Option, type Command } from "commander";

export function registerRelay(program: Command): void {
  const relay = program.command("relay").description("The self-hostable relay: rendezvous broker and tunnel host");
  relay
    .command("serve")
    .description("Run the relay in the foreground (see docs/remote.md)")
    .option("--port <port>", "listen port (default 8787; 0 = any free port)")
    .option("--bind <address>", "bind address (default 127.0.0.1; 0.0.0.0 to serve the network)")
    .option("--tls-cert <file>", "PEM certificate: serve wss:// and https:// (needs --tls-key)")
    .option("--tls-key <file>", "PEM private key of --tls-cert")
    .option(
      "--tunnel-token-file <file>",
      "file of host tokens daemons open tunnels with, one a line (also SVC_RELAY_TUNNEL_TOKENS, comma-separated); callers present each one's derived caller token",
    )
    // Kept only to refuse it with a pointer to the file: a secret on argv is visible through `ps`.
    .addOption(new Option("--tunnel-token <token...>").hideHelp())
    .option("--public-url <url>", "public base URL of tunnels (default: from the daemon's Host header)")
    .option(
      "--limit <name=value>",
      "change one bound (repeatable), e.g. maxConnections=5000, idleMs=60000; names in docs/remote.md",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .action(async (opts) => (await import("../../remote/cli/relay-verb.js")).relayServe(opts));
}
