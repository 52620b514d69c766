/** `svc webhooks add`: a webhook sentinel from the CLI, through the daemon's store (issue 13, "The CLI"). */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 31).toString("base64")}`;

describe("svc webhooks add", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-whadd-", config: LOOPBACK_CONFIG });
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli(["webhooks", "add", ...args], { home: fx.home, env });

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
      ["https://hooks.example.com/x", "--subject", "a", "--secret", SECRET, "--secret-env", "X"],
      /--secret or --secret-env, not both/,
    ],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--secret-env", "SVC_TEST_UNSET_VAR"],
      /SVC_TEST_UNSET_VAR: that environment variable is not set/,
    ],
    [
      ["https://hooks.example.com/x", "--subject", "a", "--idempotency-key", "k1"],
      /--idempotency-key needs --secret or --secret-env/,
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
    const r = await cli([rx.url.replace("https://", "https://user:pw@"), "--subject", "wd:1", "--secret", SECRET]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/must not carry credentials/);
    expect(rx.challenges).toBe(before);
  });
});
