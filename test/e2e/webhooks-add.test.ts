/**
 * `svc webhooks add`: a webhook sentinel from the CLI, through the daemon's store (issue 13, "The
 * CLI"). Its secret comes from a prompt, piped stdin, a file or an environment variable, never its
 * command line (issue 43).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, runCli, useDaemonProcess } from "../support/cli.js";
import { expectSecretOffEveryCommandLine, finished } from "../support/command-lines.js";
import { CLI_PATH } from "../support/paths.js";
import { answerPromptsOnTerminal, hasScript } from "../support/terminal.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

// Random per run: a test here looks through every process's command line for it, and another
// suite on the machine may be running the refusal test, which puts its secret on one.
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

describe("svc webhooks add", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-whadd-", config: LOOPBACK_CONFIG });
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}, input?: string) =>
    runCli(["webhooks", "add", ...args], { home: fx.home, env, input });
  /** The sentinel `--json` printed was created with SECRET: the receiver (which knows only SECRET) answered its challenge. */
  const expectCreatedWithSecret = (r: { code: number; stdout: string; stderr: string }) => {
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).spec.target).toMatchObject({ kind: "webhook", hasSecret: true });
    expect(r.stdout + r.stderr).not.toContain(SECRET.slice(6));
  };

  it("creates a webhook sentinel with the secret from the environment; until defaults to never; nothing secret is printed", async () => {
    const r = await cli(
      [
        rx.url,
        "--subject",
        "wa:*",
        "--subject",
        "wb:1",
        "--types",
        "ci.*",
        "--secret-env",
        "MY_SECRET",
        "--label",
        "hooks",
        "--json",
      ],
      { MY_SECRET: SECRET },
    );
    expect(r.code, r.stderr).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.spec).toMatchObject({
      match: [
        { subject: "wa:*", types: ["ci.*"] },
        { subject: "wb:1", types: ["ci.*"] },
      ],
      until: { kind: "never" },
      provider: "agentpush",
      label: "hooks",
      target: { kind: "webhook", hasSecret: true, secretRedacted: true },
    });
    expect(r.stdout).not.toContain(SECRET.slice(6));
    expect(rx.challenges).toBeGreaterThan(0);
    expect(await readFile(join(fx.home, "sentinels-secrets.json"), "utf8")).toContain(SECRET);
  });

  it("without a secret generates one, prints it once, and the receiver must know it (so the challenge still runs)", async () => {
    const r = await cli([rx.url, "--subject", "wc:1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/secret \(shown once/);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(r.stdout)![0];
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
  });

  it.each([
    [
      ["https://hooks.example.com/x"],
      /give at least one --subject.*e\.g\. svc webhooks add https:\/\/hooks\.example\.com\/svc --subject 'ci:api\*'/,
    ],
    [["https://hooks.example.com/x", "--subject", "a", "--until", "soon"], /--until must be never, count:<n>/],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--secret", "--secret-env", "X"],
      /give one of --secret, --secret-file or --secret-env, not --secret and --secret-env/,
    ],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--secret-file", "/nonexistent/secret"],
      /--secret-file \/nonexistent\/secret: no such file/,
    ],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--secret-env", "SVC_TEST_UNSET_VAR"],
      /SVC_TEST_UNSET_VAR: that environment variable is not set/,
    ],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--idempotency-key", "k1"],
      /--idempotency-key needs the secret given \(--secret, --secret-file or --secret-env\)/,
    ],
  ])("usage errors (exit 2) say what is wrong and show a valid form: %j", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("--idempotency-key: a retry answers with the same sentinel and sends no second challenge", async () => {
    const args = [rx.url, "--subject", "wi:1", "--secret-env", "MY_SECRET", "--idempotency-key", "hook-1", "--json"];
    const first = await cli(args, { MY_SECRET: SECRET });
    expect(first.code, first.stderr).toBe(0);
    const challenges = rx.challenges;
    const retry = await cli(args, { MY_SECRET: SECRET });
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse(retry.stdout).id).toBe(JSON.parse(first.stdout).id);
    expect(rx.challenges).toBe(challenges);
    const stored = await readFile(join(fx.home, "sentinels.json"), "utf8");
    expect(stored).not.toContain(SECRET.slice(6));
  });

  it("a URL with credentials is refused by the daemon with the one URL rule, before any challenge", async () => {
    const before = rx.challenges;
    const r = await cli([rx.url.replace("https://", "https://user:pw@"), "--subject", "wd:1", "--secret-env", "S"], {
      S: SECRET,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/must not carry credentials/);
    expect(rx.challenges).toBe(before);
  });

  it.each([
    ["before the other flags", (v: string) => ["--secret", v, "--subject", "we:1"]],
    ["as --secret=<value>", (v: string) => ["--subject", "we:1", `--secret=${v}`]],
  ])(
    "a secret on the command line (%s) is refused (exit 2) with where to pass it, never repeating it; nothing is sent",
    async (_, flags) => {
      const before = rx.challenges;
      const r = await cli([rx.url, ...flags(SECRET)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--secret takes no value: a secret on the command line is shown by ps/);
      expect(r.stderr).toMatch(/--secret alone to type it at a prompt.*--secret-file <path> or --secret-env <VAR>/);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(r.stdout + r.stderr).not.toContain(SECRET.slice(6, 20));
      expect(rx.challenges).toBe(before);
    },
  );

  it("--secret reads piped stdin (and --secret - too): while it runs no command line holds the secret", async () => {
    const child = spawn(
      process.execPath,
      [CLI_PATH, "webhooks", "add", rx.url, "--subject", "wf:1", "--secret", "--json"],
      {
        env: childEnv(fx.home),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const done = finished(child);
    child.stdin.write(SECRET);
    await expectSecretOffEveryCommandLine(child, SECRET);
    child.stdin.end("\n");
    expectCreatedWithSecret(await done);
    expectCreatedWithSecret(await cli([rx.url, "--subject", "wf:2", "--secret", "-", "--json"], {}, `${SECRET}\n`));
  });

  it("--secret with empty piped stdin is refused; nothing is created", async () => {
    const r = await cli([rx.url, "--subject", "wf:3", "--secret"], {}, "");
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining("the value read from stdin is empty")]);
  });

  it("--secret-file reads the secret from a file (a trailing line break trimmed); an empty file is refused", async () => {
    const file = join(fx.home, "webhook-secret");
    await writeFile(file, `${SECRET}\n`);
    await chmod(file, 0o600);
    expectCreatedWithSecret(await cli([rx.url, "--subject", "wg:1", "--secret-file", file, "--json"]));
    await writeFile(file, "");
    const empty = await cli([rx.url, "--subject", "wg:2", "--secret-file", file]);
    expect([empty.code, empty.stderr]).toEqual([
      2,
      expect.stringContaining(`--secret-file ${file}: the file is empty`),
    ]);
  });

  it.skipIf(!hasScript)("--secret on a terminal prompts without echoing what is typed", async () => {
    const r = await answerPromptsOnTerminal(
      fx.home,
      ["webhooks", "add", rx.url, "--subject", "wh:1", "--secret", "--json"],
      [["webhook secret (whsec_…) (input hidden): ", SECRET]],
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"hasSecret": true/);
    expect(r.stdout + r.stderr).not.toContain(SECRET.slice(6));
  });
});
