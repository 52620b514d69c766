import type { Command } from "commander";
import { addLabelOptions, addMatchOptions } from "./match-options.js";

/** `svc webhooks add|ls|rm|check`: webhook sentinels, and the SSRF gate's verdict on a callback URL. */
export function registerWebhooks(program: Command): void {
  const group = program
    .command("webhooks")
    .description(
      "Webhook targets: create, list and remove webhook sentinels; check a callback URL against the SSRF gate (and resume its suspended sentinels)",
    );
  addLabelOptions(
    addMatchOptions(
      group
        .command("add")
        .description(
          "Create a sentinel that delivers matching events to an HTTPS callback as signed webhooks (the URL is challenge-verified first)",
        )
        .argument("<url>", "the https callback URL, e.g. https://hooks.example.com/svc"),
    )
      .option(
        "--secret [-]",
        "read the whsec_ secret your receiver verifies with at a prompt that does not echo, or from piped stdin; a value here is refused, ps would show it (default: generated and printed once)",
      )
      .option("--secret-file <path>", "read the secret from this file (e.g. a 0600 file)")
      .option("--secret-env <var>", "read the secret from this environment variable"),
  )
    .option(
      "--idempotency-key <key>",
      "safe retries: the same key with the same arguments within 24 hours returns the sentinel it created (needs --secret, --secret-file or --secret-env)",
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
    .command("ls")
    .alias("list")
    .description(
      "List webhook sentinels (those `webhooks add` creates and MCP events subscriptions): callback URL, match, delivery state; secrets are never shown",
    )
    .option("--json", "machine-readable output: {webhooks: [sentinel projections]}")
    .action(async (opts: { json?: boolean }) => {
      const { listWebhooks } = await import("../webhooks/list.js");
      await listWebhooks(opts.json === true);
    });
  group
    .command("rm")
    .alias("remove")
    .description(
      "Remove a webhook sentinel by id, or the webhook sentinels delivering to a URL (--all when several do); its undelivered events end as dead (sentinel_removed)",
    )
    .argument("<id|url>", "a webhook sentinel's id (snt_…) or its callback URL as `webhooks ls` shows it")
    .option("--all", "with a URL: remove every webhook sentinel delivering there")
    .option("--json", "print {removed: [ids]}")
    .action(async (ref: string, opts: { all?: boolean; json?: boolean }) => {
      const { removeWebhooks } = await import("../webhooks/remove.js");
      await removeWebhooks(ref, opts);
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
