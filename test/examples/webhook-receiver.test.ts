/**
 * Issue 43, finding 3: examples/webhook-receiver.mjs as a reader runs it. `--help` prints the
 * usage and exits 0, a wrong flag is a one-line error (exit 2, no stack trace), and each delivery
 * line names the event's type: svc's envelope and an MCP events occurrence (`data.type`, and the
 * event's `name`) alike. The example as a real process, on the test CA's certificate, fed by a
 * real daemon: a webhook sentinel and an MCP `events/subscribe`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { useDaemonProcess } from "../support/cli.js";
import { REPO_ROOT } from "../support/paths.js";
import { LOOPBACK_CONFIG, until } from "../support/webhook-receiver.js";

const EXAMPLE = join(REPO_ROOT, "examples/webhook-receiver.mjs");
const TLS = join(REPO_ROOT, "test/fixtures/tls");
const SECRET = `whsec_${Buffer.alloc(32, 43).toString("base64")}`;
const USAGE = /^usage: WEBHOOK_SECRET=whsec_… node examples\/webhook-receiver\.mjs --cert cert\.pem --key key\.pem/m;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startExample(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [EXAMPLE, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, WEBHOOK_SECRET: undefined, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c) => (stdout += c));
  child.stderr!.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

describe("examples/webhook-receiver.mjs: its flags", () => {
  it("--help prints the usage and what it prints on stdout, exit 0", async () => {
    for (const flag of ["--help", "-h"]) {
      const run = startExample([flag]);
      expect(await run.exited, run.stderr()).toBe(0);
      expect(run.stderr()).toBe("");
      expect(run.stdout()).toMatch(USAGE);
      expect(run.stdout()).toContain("(MCP event <name>)");
    }
  });

  it.each([
    [["--bogus"], "unknown option --bogus"],
    [["--cert", "c.pem", "extra"], "unexpected argument extra"],
    [["--port"], "Option '--port <value>' argument missing"],
    [["--key", "k.pem"], "--cert is required"],
    [
      ["--cert", "/nonexistent/cert.pem", "--key", "k.pem"],
      "cannot read the --cert file /nonexistent/cert.pem: ENOENT",
    ],
    [
      ["--cert", join(TLS, "server.crt"), "--key", join(TLS, "server.key"), "--port", "http"],
      "--port must be 0..65535, got http",
    ],
  ])("%j: one line saying what is wrong, the usage, exit 2", async (args, message) => {
    const run = startExample(args, { WEBHOOK_SECRET: SECRET });
    expect(await run.exited).toBe(2);
    expect(run.stdout()).toBe("");
    const [first, ...rest] = run.stderr().split("\n");
    expect(first).toBe(`webhook-receiver: ${message}`);
    expect(rest.join("\n")).toMatch(USAGE);
    expect(run.stderr()).not.toMatch(/^\s+at |TypeError|node:internal/m);
  });
});

describe("examples/webhook-receiver.mjs: what it prints of each delivery (real daemon)", () => {
  const fx = useDaemonProcess({ prefix: "svc-example-receiver-", config: LOOPBACK_CONFIG });
  let rx: Run;
  let url: string;
  let client: Client;
  beforeAll(async () => {
    rx = startExample(["--port", "0", "--cert", join(TLS, "server.crt"), "--key", join(TLS, "server.key")], {
      WEBHOOK_SECRET: SECRET,
    });
    const port = await until(() => /listening on https:\/\/localhost:(\d+)\//.exec(rx.stdout())?.[1], "the receiver");
    url = `https://127.0.0.1:${port}/hook`;
    client = new Client({ name: "svc-example-receiver", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
    if (rx && rx.child.exitCode === null) {
      rx.child.kill("SIGTERM");
      await rx.exited;
    }
  });

  const push = async (event: Record<string, unknown>) => {
    const res = await fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([event]),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const lineFor = (id: string) =>
    until(
      () =>
        rx
          .stdout()
          .split("\n")
          .find((l) => l.startsWith(`verified ${id} `)),
      `the line for ${id}`,
    );

  it("a webhook sentinel's delivery: verified <id> <type> <subjects>", async () => {
    const created = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "demo:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url, secret: SECRET },
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    await push({ id: "evt_plain_1", type: "demo.greeting.sent", subjects: ["demo:hello"], data: { text: "hi" } });
    expect(await lineFor("evt_plain_1")).toBe("verified evt_plain_1 demo.greeting.sent demo:hello");
  });

  it("an MCP events delivery: the occurrence's data.type and subjects, and the event's name", async () => {
    const sub = (await client.request(
      {
        method: "events/subscribe",
        params: {
          name: "agentpush.event",
          arguments: { subject: "mcp43:*" },
          delivery: { mode: "webhook", url, secret: SECRET },
        },
      } as never,
      z.looseObject({ id: z.string() }),
    )) as { id: string };
    await until(() => rx.stdout().includes(`verified challenge for subscription ${sub.id}\n`), "the challenge line");
    await push({ id: "evt_mcp_1", type: "ci.build.finished", subjects: ["mcp43:api", "mcp43:api#7"], data: {} });
    expect(await lineFor("evt_mcp_1")).toBe(
      "verified evt_mcp_1 ci.build.finished mcp43:api mcp43:api#7 (MCP event agentpush.event)",
    );
    expect(rx.stdout()).not.toContain(" ? ");
    expect(rx.stderr()).toBe("");
  });
});
