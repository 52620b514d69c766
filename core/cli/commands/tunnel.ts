import type { Command } from "commander";

export function registerTunnel(program: Command): void {
  const tunnel = program
    .command("tunnel")
    .description("Call a daemon through its tunnel's public URL (see docs/remote.md)");
  tunnel
    .command("caller-token")
    .description(
      "Print this daemon's tunnel caller token (derived from its host token tunnel.token or credentials.json tunnel/token, which is never printed): give it to callers as SVC_TUNNEL_TOKEN",
    )
    .option("--profile <name>", "configuration profile (overrides activeProfile)")
    .action(async (opts: { profile?: string }) =>
      (await import("../../remote/cli/caller-token-verb.js")).printCallerToken(opts),
    );
  tunnel
    .command("call <public-url> <path>")
    .description(
      "Send one request through a tunnel: the tunnel's caller token (`svc tunnel caller-token` prints it) from SVC_TUNNEL_TOKEN, the daemon's own token (if it has one) from SVC_REMOTE_AUTH_TOKEN; with --key, sealed end to end",
    )
    .option("--method <method>", "HTTP method (default GET)")
    .option("--data <json>", "JSON request body")
    .option(
      "--key <public-key>",
      "the daemon's end-to-end key (`tunnel end-to-end key:` printed by svc serve): seal the request to it",
    )
    .action(async (url: string, path: string, opts) =>
      (await import("../../remote/cli/tunnel-call.js")).tunnelCall(url, path, opts),
    );
}
