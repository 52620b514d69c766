import type { Command } from "commander";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the daemon in the foreground (files under $SVC_HOME, default ~/.svc)")
    .option("--port <port>", "listen port (default: daemon.port, else 18790)")
    .option("--bind <address>", "bind address (default: daemon.bind, else 127.0.0.1)")
    .option("--auth-token-file <path>", "read the stable bearer token from this file (overrides daemon.authToken)")
    .option(
      "--auth-token <token>",
      "stable bearer token (overrides daemon.authToken); ps shows it to every user: prefer --auth-token-file",
    )
    .option("--profile <name>", "configuration profile (overrides activeProfile)")
    .option(
      "--connect <wss-url>",
      "open the outbound tunnel to this tunnel host (sets tunnel.host; token from tunnel.token or credentials.json)",
    )
    .action(
      async (opts: {
        port?: string;
        bind?: string;
        authToken?: string;
        authTokenFile?: string;
        profile?: string;
        connect?: string;
      }) => {
        // The resolver checks every flag against the key's schema (range included) and names the flag.
        // A value that is not a whole number is named as given (not as NaN); the range is the resolver's.
        if (opts.port !== undefined && !/^\d+$/.test(opts.port.trim())) {
          const { usageError } = await import("../output.js");
          throw usageError(
            `--port ${JSON.stringify(opts.port)} is not a port number; give a whole number from 1 to 65535, or 0 for any free port (it sets daemon.port)`,
          );
        }
        const port = opts.port === undefined ? undefined : Number(opts.port);
        const { authTokenFlags } = await import("../serve-auth-token.js");
        const token = await authTokenFlags(opts);
        const { serve } = await import("../serve.js");
        await serve({ port, bind: opts.bind, ...token, profile: opts.profile, connect: opts.connect });
      },
    );
}
