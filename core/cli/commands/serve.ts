import { Option, type Command } from "commander";
import type { DetachFlags } from "../daemon-start.js";
import { START_TIMEOUT_FLAG, durationHelp } from "../duration-flags.js";

interface ServeOptions extends DetachFlags {
  detach?: boolean;
  detachedChild?: boolean;
  timeout?: string;
}

/** The options `svc serve` and `svc start` share (`svc start` passes them on to the daemon it starts). */
function serveOptions(cmd: Command): Command {
  return cmd
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
    .option(
      "--store <url>",
      "team mode: keep sentinels in this PostgreSQL database, postgres://user@host:port/db (overrides SVC_STORE_URL and store.url); a URL with a password is refused, ps would show it: give the password by PGPASSWORD or ~/.pgpass",
    );
}

const DETACH_HELP = durationHelp(
  "how long to wait for the detached daemon to answer before giving up (default 60s; the daemon is left running)",
  START_TIMEOUT_FLAG,
);

async function serveAction(opts: ServeOptions, detach: boolean): Promise<void> {
  if (!detach && opts.timeout !== undefined) {
    const { usageError } = await import("../output.js");
    throw usageError("--timeout goes with --detach (how long to wait for the detached daemon)");
  }
  // The resolver checks every flag against the key's schema (range included) and names the flag.
  // A value that is not a whole number is named as given (not as NaN); the range is the resolver's.
  if (opts.port !== undefined && !/^\d+$/.test(opts.port.trim())) {
    const { usageError } = await import("../output.js");
    throw usageError(
      `--port ${JSON.stringify(opts.port)} is not a port number; give a whole number from 1 to 65535, or 0 for any free port (it sets daemon.port)`,
    );
  }
  const port = opts.port === undefined ? undefined : Number(opts.port);
  if (opts.store !== undefined) (await import("../../store/select.js")).checkStoreFlag(opts.store);
  const { authTokenFlags } = await import("../serve-auth-token.js");
  const token = await authTokenFlags(opts);
  if (detach) {
    const { startDetached } = await import("../daemon-start.js");
    return startDetached(opts, opts.timeout);
  }
  // Before the daemon's modules load: start-up must not grow the young generation (young-generation.ts).
  (await import("../../runtime/young-generation.js")).holdYoungGeneration();
  const { serve } = await import("../serve.js");
  await serve(
    { port, bind: opts.bind, ...token, profile: opts.profile, connect: opts.connect, store: opts.store },
    { detached: opts.detachedChild === true },
  );
}

export function registerServe(program: Command): void {
  serveOptions(
    program
      .command("serve")
      .description(
        "Run the daemon in the foreground (files under $SVC_HOME, default ~/.svc; log in $SVC_HOME/logs/daemon.log); --detach runs it in the background as `svc start` does",
      ),
  )
    .option("--detach", "start the daemon in the background and return once it answers (as `svc start`)")
    .option("--timeout <duration>", `with --detach: ${DETACH_HELP}`)
    // The child `svc start` spawns: logs to the file only, prints no banner.
    .addOption(new Option("--detached-child").hideHelp())
    .action((opts: ServeOptions) => serveAction(opts, opts.detach === true));
  serveOptions(
    program
      .command("start")
      .description(
        "Start the daemon in the background (detached, logging to $SVC_HOME/logs/daemon.log) and return once it answers; exit 0 when started or already running, 1 when it did not start",
      ),
  )
    .option("--timeout <duration>", DETACH_HELP)
    .action((opts: ServeOptions) => serveAction(opts, true));
}
