import type { Command } from "commander";

/** `svc webhooks add|check`: webhook sentinels, and the SSRF gate's verdict on a callback URL. */
export function registerWebhooks(program: Command): void {
  const group = program
    .command("webhooks")
    .description(
      "Webhook targets: create a webhook sentinel, check a callback URL against the SSRF gate (and resume its suspended sentinels)",
    );
  group
    .command("add")
    .description(
      "Create a sentinel that delivers matching events to an HTTPS callback as signed webhooks (the URL is challenge-verified first)",
    )
    .argument("<url>", "the https callback URL, e.g. https://hooks.example.com/svc")
    .option(
      "--subject <subject>",
      "subject to match (repeatable); a trailing * matches a prefix, e.g. 'ci:api*'",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--types <globs>", "comma-separated type globs (default: the provider's default types)")
    .option("--until <until>", "never | count:<n> | at:<ISO time or epoch ms> | subject_terminal (default: never)")
    .option("--provider <slug>", "provider slug (default: local-gh for github: subjects, else agentpush)")
    .option(
      "--secret <secret>",
      "the whsec_ secret your receiver verifies with, or - to read it from stdin (default: generated and printed once)",
    )
    .option("--secret-env <var>", "read the secret from this environment variable")
    .option("--label <label>", "human-readable label")
    .option("--group <group>", "fan-out group (descriptive)")
    .option(
      "--idempotency-key <key>",
      "safe retries: the same key with the same arguments within 24 hours returns the sentinel it created (needs --secret or --secret-env)",
    )
    .option("--json", "print the created sentinel as JSON")
    .addHelpText(
      "after",
      "\nExample:\n  $ svc webhooks add https://hooks.example.com/svc --subject 'ci:api*' --secret-env WEBHOOK_SECRET",
    )
    .action(async (url: string, opts) => {
      const { addWebhook } = await import("../webhooks/add.js");
      await addWebhook(url, opts);
    });
  group
    .command("check")
    .description(
      "Resolve a callback URL and print each address, the IANA special-purpose range it falls in, and the SSRF gate's verdict " +
        "(respecting webhooks.allowSubnets). When allowed and a daemon runs, the daemon sends a signed challenge to each webhook sentinel " +
        "of that URL whose delivery is suspended and resumes those that answer; nothing else is sent. " +
        "Exit 0 when allowed, 1 when blocked, 2 when the URL does not parse",
    )
    .argument("<url>", "the callback URL, e.g. https://hooks.example.com/svc")
    .option("--json", "machine-readable output")
    .action(async (url: string, opts: { json?: boolean }) => {
      const { runWebhooksCheck } = await import("../webhooks/check.js");
      process.exitCode = await runWebhooksCheck(url, { json: opts.json === true });
    });
}
