import type { Command } from "commander";
import { addLabelOptions, addMatchOptions } from "./match-options.js";
import { SINCE_FLAG, timeHelp } from "../duration-flags.js";

/**
 * `svc sentinel watch|create|list|status|unwatch|poll-now|push|rotate-secret|replay|resume|providers [setup]`: everything through the
 * daemon's REST API. Each subcommand is one block below; implementations load lazily.
 */
export function registerSentinel(program: Command): void {
  const sentinel = program
    .command("sentinel")
    .description("Sentinels: watch events and deliver matches to a target (through the running daemon)");

  sentinel
    .command("watch")
    .description(
      "Create a sentinel delivering matching events to a session (session targets only; for a webhook use `svc webhooks add`, for another target kind `svc sentinel create --target <kind>`)",
    )
    .argument("[subject]", "subject to watch; a trailing * makes it a prefix (e.g. github:acme/api#42, ci:*)")
    .option(
      "--pr <url>",
      "watch a pull request by URL instead of a subject (https://github.com/<owner>/<repo>/pull/<n>)",
    )
    .option("--types <globs>", "comma-separated type globs (default: the provider's default types for the subject)")
    .option(
      "--until <until>",
      "never | count:<n> | at:<ISO time or epoch ms> | subject_terminal (default: subject_terminal with --pr, else never)",
    )
    .option(
      "--provider <slug>",
      "provider slug, e.g. local-gh, webhook, agentpush (default: local-gh for github: subjects, else agentpush)",
    )
    .requiredOption("--session <id>", "session that receives the matched events")
    .option(
      "--urgency <urgency>",
      "how the session receives events: queue, steer or interrupt (default: the session target's, from defaults.agentPromptInterrupt)",
    )
    .option("--label <label>", "human-readable label")
    .option("--group <group>", "fan-out group (descriptive)")
    .option(
      "--idempotency-key <key>",
      "safe retries: the same key with the same arguments within 24 hours returns the sentinel it created instead of a second one",
    )
    .option("--json", "print the created sentinel as JSON")
    .action(async (subject: string | undefined, opts) => {
      const { watch } = await import("../sentinel/watch.js");
      await watch(subject, opts);
    });

  addLabelOptions(
    addMatchOptions(
      sentinel
        .command("create")
        .description(
          "Create a sentinel with any target kind, a plugin's included: the target is {kind: --target, ...--target-json}, validated by its plugin",
        )
        .requiredOption(
          "--target <kind>",
          "target kind, e.g. a target plugin's kind (session and webhook have watch and webhooks add)",
        )
        .option(
          "--target-json <json|@file|->",
          "the target's fields besides kind as a JSON object: inline, @<file>, or - for stdin (use a file or stdin for anything secret)",
        ),
    ),
  )
    .option(
      "--idempotency-key <key>",
      "safe retries: the same key with the same arguments within 24 hours returns the sentinel it created",
    )
    .option("--json", "print the created sentinel as JSON")
    .addHelpText(
      "after",
      `\nExample:\n  $ svc sentinel create --target my-target --target-json '{"channel":"ops"}' --subject 'ci:api*'`,
    )
    .action(async (opts) => {
      const { create } = await import("../sentinel/create.js");
      await create(opts);
    });

  sentinel
    .command("list")
    .alias("ls")
    .description("List sentinels (targets shown redacted)")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { list } = await import("../sentinel/show.js");
      await list(opts.json === true);
    });

  sentinel
    .command("status")
    .description("Show one sentinel, with its target's status (e.g. webhook outbox rows and their delivery state)")
    .argument("<id>", "sentinel id (snt_…)")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const { status } = await import("../sentinel/show.js");
      await status(id, opts.json === true);
    });

  sentinel
    .command("unwatch")
    .alias("rm")
    .description("Stop and remove a sentinel")
    .argument("<id>", "sentinel id (snt_…)")
    .action(async (id: string) => {
      const { unwatch } = await import("../sentinel/actions.js");
      await unwatch(id);
    });

  sentinel
    .command("poll-now")
    .description("Trigger an immediate poll cycle of the polling providers")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { pollNow } = await import("../sentinel/actions.js");
      await pollNow(opts.json === true);
    });

  sentinel
    .command("push")
    .description("Push an event to the agentpush provider (answers once every matched event is durably accepted)")
    .argument("<subjects...>", "the event's subjects, broadest first (e.g. ci:api ci:api#build-7)")
    .requiredOption("--type <type>", "event type, e.g. ci.build.finished")
    .option("--id <id>", "stable event id, no '.' (default: a fresh ULID)")
    .option(
      "--data <json|@file|->",
      "event data as JSON: inline, @<file> to read a file, or - to read stdin (for large events)",
    )
    .option("--terminal", "mark the event's last subject terminal (ends until: subject_terminal sentinels on it)")
    .option("--json", "print the ingest result as JSON")
    .action(async (subjects: string[], opts) => {
      const { push } = await import("../sentinel/actions.js");
      await push(subjects, opts);
    });

  sentinel
    .command("rotate-secret")
    .description(
      "Rotate a webhook sentinel's secret: the new one is challenge-verified first; the previous one also signs for 10 minutes",
    )
    .argument("<id>", "sentinel id (snt_…) with a webhook target")
    .option(
      "--secret [-]",
      "read the new whsec_ secret at a prompt that does not echo, or from piped stdin; a value here is refused, ps would show it (default: the daemon generates one and prints it once)",
    )
    .option("--secret-file <path>", "read the new secret from this file (e.g. a 0600 file)")
    .option("--secret-env <var>", "read the new secret from this environment variable")
    .option("--json", "machine-readable output")
    .action(
      async (
        id: string,
        opts: { secret?: string | boolean; secretFile?: string; secretEnv?: string; json?: boolean },
      ) => {
        const { rotateSecret } = await import("../sentinel/rotate-secret.js");
        await rotateSecret(id, opts);
      },
    );

  sentinel
    .command("replay")
    .description(
      "Send a webhook sentinel's dead rows again (exact stored bytes, same webhook-id, attempts reset); --event or --since also take delivered rows",
    )
    .argument("<id>", "sentinel id (snt_…) with a webhook target")
    .option("--event <eventId>", "only this event's row")
    .option("--since <time>", timeHelp("only rows created since", SINCE_FLAG))
    .option("--dead", "only dead rows (the default without --event and --since)")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { event?: string; since?: string; dead?: boolean; json?: boolean }) => {
      const { replay } = await import("../sentinel/actions.js");
      await replay(id, opts);
    });

  sentinel
    .command("resume")
    .description(
      "Resume a webhook sentinel whose delivery was suspended because its callback kept failing: every pending event is sent again",
    )
    .argument("<id>", "sentinel id (snt_…) with a webhook target")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const { resume } = await import("../sentinel/actions.js");
      await resume(id, opts.json === true);
    });

  const providers = sentinel
    .command("providers")
    .description("Report each loaded provider's readiness; `providers setup <provider>` configures one")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { providers } = await import("../sentinel/show.js");
      await providers(opts.json === true);
    });
  const repeat = (v: string, prev: string[] = []) => [...prev, v];
  providers
    .command("setup")
    .description(
      "Configure a provider (a secret, an API key, a public base URL), as the MCP tool setup_sentinel_provider does. " +
        "Secrets never go on the command line: --secret prompts without echo (or reads piped stdin), --secret-env and --from-file read them elsewhere",
    )
    .argument("<provider>", "provider slug, e.g. webhook")
    .option(
      "--set <key=value>",
      "a setting that is not secret (repeatable); the value parses as JSON when it can",
      repeat,
    )
    .option(
      "--secret <key>",
      "a secret setting, read at a prompt that does not echo or from piped stdin (repeatable on a terminal)",
      repeat,
    )
    .option("--secret-env <key=VAR>", "a secret setting read from the environment variable VAR (repeatable)", repeat)
    .option("--from-file <path>", "settings as a JSON object in a file (e.g. a 0600 file holding the secret)")
    .option("--json", "print {provider, configured} (secrets redacted) as JSON")
    .addHelpText(
      "after",
      "\nExample:\n  $ svc sentinel providers setup webhook --secret secret --set publicBaseUrl=https://hooks.example.com",
    )
    .action(async (provider: string, opts) => {
      const { setupProvider } = await import("../sentinel/provider-setup.js");
      // `providers` has a --json of its own, which commander gives the parent wherever it appears.
      await setupProvider(provider, { ...opts, json: opts.json === true || providers.opts().json === true });
    });
}
