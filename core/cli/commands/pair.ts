import type { Command } from "commander";
import { TTL_FLAG, durationHelp } from "../duration-flags.js";

export function registerPair(program: Command): void {
  const pair = program
    .command("pair")
    .description("Pair with other devices through a rendezvous broker (end-to-end encrypted)");
  pair
    .command("offer")
    .description("Make a one-time pairing offer: a svc://pair?… URL and a QR code (with --qr, the web pair page URL)")
    .option("--qr", "print the web pair page URL with the offer in its fragment (the QR code then encodes it)")
    .option(
      "--rendezvous <url>",
      'relay URL as `svc relay serve` prints it, ws[s]://host:port/v1 (overrides pairing.rendezvous; required when it is "" or unset)',
    )
    .option("--pair-page <url>", "web pair page (overrides pairing.pairPage; needs --qr)")
    .option("--ttl <duration>", durationHelp("how long the offer stays valid (default 10m)", TTL_FLAG))
    .option("--label <name>", "this daemon's name as the other end will see it (default: the host name)")
    .option(
      "--scope <scope>",
      "what the device that accepts may do here: read (default: listings, status, transcripts) or operate (also start, prompt and stop sessions, watch, run swarms, under pairing.allowedRoots)",
    )
    .option("--yes", "confirm the operate scope without being asked (needed when not on a terminal)")
    .option("--json", "print the offer as JSON")
    .action(async (opts) => (await import("../../remote/cli/pair-verbs.js")).pairOffer(opts));
  pair
    .command("accept <offer>")
    .description("Accept another daemon's offer (the svc://pair?… text) and store the pairing")
    .option("--label <name>", "this end's name as the other daemon will see it")
    .option("--json", "print the pairing as JSON")
    .action(async (offer: string, opts) => (await import("../../remote/cli/pair-verbs.js")).pairAccept(offer, opts));
  pair
    .command("ls")
    .description("List pairings with the state of each standing link")
    .option("--json", "print JSON")
    .action(async (opts) => (await import("../../remote/cli/pair-verbs.js")).pairList(opts));
  pair
    .command("scope <id> <scope>")
    .description(
      "Set what a paired device may do here: read, or operate (start, prompt and stop sessions, watch, run swarms, under pairing.allowedRoots)",
    )
    .option("--yes", "confirm the operate scope without being asked (needed when not on a terminal)")
    .option("--json", "print the pairing as JSON")
    .action(async (id: string, scope: string, opts) =>
      (await import("../../remote/cli/pair-verbs.js")).pairScope(id, scope, opts),
    );
  pair
    .command("rm <id>")
    .description("Remove a pairing (do it on both ends)")
    .option("--json", "print JSON")
    .action(async (id: string, opts) => (await import("../../remote/cli/pair-verbs.js")).pairRemove(id, opts));
  pair
    .command("page")
    .description("Serve the web pair page locally (open the URL `pair offer --qr --pair-page <it>` prints)")
    .option("--port <port>", "listen port (default 0: any free port)")
    .option("--bind <address>", "bind address (default 127.0.0.1)")
    .action(async (opts) => (await import("../../remote/cli/page-verb.js")).pairPage(opts));
}
