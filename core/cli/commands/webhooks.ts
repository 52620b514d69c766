import type { Command } from "commander";

/** `svc webhooks check <url>`: the SSRF gate's verdict on a callback URL, sending nothing. */
export function registerWebhooks(program: Command): void {
  const group = program.command("webhooks").description("Webhook target tools: check a callback URL against the SSRF gate");
  group
    .command("check")
    .description(
      "Resolve a callback URL and print each address, the IANA special-purpose range it falls in, and the SSRF gate's verdict " +
        "(respecting webhooks.allowSubnets); sends nothing. Exit 0 when allowed, 1 when blocked, 2 when the URL does not parse",
    )
    .argument("<url>", "the callback URL, e.g. https://hooks.example.com/svc")
    .option("--json", "machine-readable output")
    .action(async (url: string, opts: { json?: boolean }) => {
      const { runWebhooksCheck } = await import("../webhooks/check.js");
      process.exitCode = await runWebhooksCheck(url, { json: opts.json === true });
    });
}
