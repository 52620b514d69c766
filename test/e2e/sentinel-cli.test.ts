/**
 * Issue 28's sentinel and top-level rough edges, through the real CLI and a real daemon that loads
 * the recording-target fixture: `sentinel create --target <kind> --target-json`, `sentinel push
 * --data @file|-` with a 300 KB event, `sentinel providers setup` (secrets never from argv), `svc`
 * alone, `svc version`, and `sentinel watch --help`.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { useRecordingDaemon } from "./recording-sandbox.js";
import { until } from "../support/webhook-receiver.js";

const PROVIDER_SECRET = "provider-secret-value-0123456789abcdef";

describe("svc sentinel create, push --data @file|-, providers setup", () => {
  const fx = useRecordingDaemon();
  const svc = (args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
    runCli(args, { home: fx.home, ...opts });
  const deliveries = async () =>
    (await readFile(join(fx.home, "plugins", "target-recording", "deliveries.jsonl"), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { sentinelId: string; eventId: string; data?: { blob?: string } });

  it("sentinel create --target <plugin kind> --target-json (inline, @file, stdin) makes a working sentinel", async () => {
    const inline = await svc([
      "sentinel",
      "create",
      "--target",
      "recording",
      "--target-json",
      '{"name":"r1"}',
      "--subject",
      "big:*",
      "--json",
    ]);
    expect(inline.code, inline.stderr).toBe(0);
    expect(JSON.parse(inline.stdout).spec).toMatchObject({
      target: { kind: "recording", name: "r1" },
      match: [{ subject: "big:*" }],
      until: { kind: "never" },
    });
    const file = join(fx.home, "target.json");
    await writeFile(file, '{"name":"r2"}');
    const fromFile = await svc([
      "sentinel",
      "create",
      "--target",
      "recording",
      "--target-json",
      `@${file}`,
      "--subject",
      "f:1",
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toMatch(/^snt_\S+ delivering f:1 \(provider agentpush\) → target recording/);
    const piped = await svc(
      ["sentinel", "create", "--target", "recording", "--target-json", "-", "--subject", "p:1", "--json"],
      {
        input: '{"name":"r3"}',
      },
    );
    expect(JSON.parse(piped.stdout).spec.target.name).toBe("r3");
  });

  it("sentinel create: the plugin's validation and bad flags are reported", async () => {
    const refused = await svc([
      "sentinel",
      "create",
      "--target",
      "recording",
      "--target-json",
      '{"nom":"x"}',
      "--subject",
      "a:1",
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/name/);
    const mixed = await svc([
      "sentinel",
      "create",
      "--target",
      "recording",
      "--target-json",
      '{"kind":"webhook"}',
      "--subject",
      "a:1",
    ]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/--target-json has kind "webhook" but --target is recording/);
    const noFile = await svc([
      "sentinel",
      "create",
      "--target",
      "recording",
      "--target-json",
      "@/nonexistent.json",
      "--subject",
      "a:1",
    ]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/--target-json \/nonexistent\.json: no such file/);
  });

  it("sentinel push --data @file and --data - carry a 300 KB event (too long for argv)", async () => {
    const blob = "x".repeat(300 * 1024);
    const file = join(fx.home, "event.json");
    await writeFile(file, JSON.stringify({ blob }));
    const fromFile = await svc([
      "sentinel",
      "push",
      "big:1",
      "--type",
      "ci.big",
      "--id",
      "big-file",
      "--data",
      `@${file}`,
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toMatch(/pushed big-file: 1 match\(es\), 1 accepted/);
    const piped = await svc(["sentinel", "push", "big:2", "--type", "ci.big", "--id", "big-stdin", "--data", "-"], {
      input: JSON.stringify({ blob }),
    });
    expect(piped.code, piped.stderr).toBe(0);
    const got = await until(async () => {
      const rows = await deliveries();
      const a = rows.find((r) => r.eventId === "big-file");
      const b = rows.find((r) => r.eventId === "big-stdin");
      return a && b ? [a, b] : undefined;
    }, "both large events to arrive");
    for (const row of got) expect(row.data?.blob).toHaveLength(blob.length);
    const bad = await svc(["sentinel", "push", "big:3", "--type", "t", "--data", "-"], { input: "{nope" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--data must be JSON \(read from stdin\)/);
  });

  it("sentinel providers setup: a secret from stdin or the environment, never argv; the answer is redacted", async () => {
    const onArgv = await svc(["sentinel", "providers", "setup", "webhook", "--set", `secret=${PROVIDER_SECRET}`]);
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toMatch(/secret looks like a secret.*--secret secret/);
    expect(onArgv.stderr).not.toContain(PROVIDER_SECRET);

    const r = await svc(
      [
        "sentinel",
        "providers",
        "setup",
        "webhook",
        "--secret",
        "secret",
        "--set",
        "publicBaseUrl=https://hooks.example.com",
        "--json",
      ],
      { input: `${PROVIDER_SECRET}\n` },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      provider: "webhook",
      configured: { secretSet: true, publicBaseUrl: "https://hooks.example.com" },
    });
    expect(r.stdout + r.stderr).not.toContain(PROVIDER_SECRET);
    const providers = JSON.parse((await svc(["sentinel", "providers", "--json"])).stdout) as {
      providers: Array<{ kind: string; readiness: { ready: boolean; secretSet?: boolean } }>;
    };
    expect(providers.providers.find((p) => p.kind === "webhook")?.readiness).toMatchObject({ secretSet: true });

    const fromEnv = await svc(["sentinel", "providers", "setup", "webhook", "--secret-env", "secret=HOOK_SECRET"], {
      env: { HOOK_SECRET: PROVIDER_SECRET },
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toMatch(/^configured webhook: /);
    expect(fromEnv.stdout).not.toContain(PROVIDER_SECRET);

    const none = await svc(["sentinel", "providers", "setup", "agentpush", "--set", "x=1"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/provider "agentpush" has no setup step/);
  });

  it("the REST route needs the bearer token even from loopback (operation provider.setup)", async () => {
    const res = await fx.daemon.fetch("/sentinel-providers/webhook/setup", {
      method: "POST",
      auth: false,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ settings: { publicBaseUrl: "https://x.example.com" } }),
    });
    expect(res.status).toBe(401);
  });
});

describe("svc alone, svc version, sentinel watch --help", () => {
  const home = "/nonexistent-svc-home";

  it("svc with no arguments prints its help on stdout and exits 0", async () => {
    const r = await runCli([], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: svc \[options\] \[command\]/);
    expect(r.stdout).toContain("webhooks");
    expect(r.stderr).toBe("");
  });

  it("svc version prints the version, as --version does", async () => {
    const v = await runCli(["--version"], { home });
    const r = await runCli(["version"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(v.stdout);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("sentinel watch --help names the CLI way to other targets, not a raw route", async () => {
    const r = await runCli(["sentinel", "watch", "--help"], { home });
    expect(r.stdout).not.toContain("POST /sentinels");
    expect(r.stdout.replace(/\s+/g, " ")).toMatch(/svc webhooks add.*svc sentinel create --target <kind>/);
  });
});
