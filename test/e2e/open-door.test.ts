/**
 * A daemon bound beyond loopback with no daemon.authToken: it says so at start (stderr and the
 * log), in runtime.json, `svc status` and `svc doctor` (live, and from config.json when stopped), and a
 * caller from the network without a token may read but never start a process (REST and MCP).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";

const XFF = { "x-forwarded-for": "203.0.113.7" };
const WARNING =
  /daemon\.bind is 0\.0\.0\.0 \(beyond loopback\) and daemon\.authToken is not set: anyone who can reach this port may read/;

describe("a daemon open to the network without a token", { timeout: 120_000 }, () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let d: DaemonProcess;

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome());
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({ daemon: { bind: "0.0.0.0" }, acpAgents: { echo: FIXTURE_AGENTS.echo } }),
    );
    d = await startDaemonProcess({ home });
  });
  afterAll(async () => {
    await d?.stop();
    await cleanup?.();
  });

  it("warns at start on stderr and in the log, and in runtime.json and svc doctor", async () => {
    // svc serve prints it once the daemon is up, just after runtime.json (which startDaemonProcess waits for).
    await expect.poll(() => d.logs(), { timeout: 60_000 }).toMatch(new RegExp(`warning: ${WARNING.source}`));
    expect(d.logs()).toMatch(new RegExp(`"level":"warn".*${WARNING.source}`));
    const runtime = JSON.parse(await readFile(join(home, "runtime.json"), "utf8")) as { warnings?: string[] };
    expect(runtime.warnings?.[0]).toMatch(WARNING);
    const status = await runCli(["status", "--json"], { home });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      running: true,
      bind: "0.0.0.0",
      pid: d.child.pid,
      answering: true,
      warnings: [expect.stringMatching(WARNING)],
    });
    const human = await runCli(["status"], { home });
    expect(human.stdout).toMatch(/^svc daemon: running, pid \d+, 0\.0\.0\.0:\d+/);
    expect(human.stderr).toMatch(WARNING);
    const doctor = await runCli(["doctor", "--json"], { home });
    const findings = (
      JSON.parse(doctor.stdout) as { findings: Array<{ severity: string; file: string; message: string }> }
    ).findings;
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: "warn", file: "runtime.json", message: expect.stringMatching(WARNING) }),
      ]),
    );
  });

  it("a network caller without a token reads, and gets 403 on POST /sessions and MCP start_agent_session", async () => {
    expect((await rawRequest(d.port, { method: "GET", path: "/sessions", headers: XFF })).status).toBe(200);
    const post = await rawRequest(d.port, {
      method: "POST",
      path: "/sessions",
      headers: { ...XFF, "content-type": "application/json" },
      body: JSON.stringify({ adapter: "echo", cwd: home }),
    });
    expect(post.status).toBe(403);
    expect(post.json()).toMatchObject({
      error: { code: "forbidden", message: expect.stringContaining("set daemon.authToken on the daemon and send it") },
    });
    const client = new Client({ name: "open-door", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${d.baseUrl}/mcp`), { requestInit: { headers: XFF } }),
    );
    try {
      expect(
        ((await client.callTool({ name: "session_list", arguments: {} })) as { isError?: boolean }).isError,
      ).toBeFalsy();
      const r = (await client.callTool({ name: "start_agent_session", arguments: { adapter: "echo", cwd: home } })) as {
        isError?: boolean;
        content: Array<{ text: string }>;
      };
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toContain("start_agent_session needs the operate scope");
    } finally {
      await client.close();
    }
    expect(JSON.parse((await runCli(["sessions", "list", "--json"], { home })).stdout).sessions).toEqual([]);
  });

  it("svc doctor finds the open door in config.json when no daemon runs; a token closes it", async () => {
    await d.stop();
    const down = await runCli(["status", "--json"], { home });
    expect(down.code).toBe(3);
    expect(JSON.parse(down.stdout)).toEqual({ running: false, home, warnings: [] });
    const stopped = JSON.parse((await runCli(["doctor", "--json"], { home })).stdout) as {
      findings: Array<{ file: string; message: string; fix: string }>;
    };
    expect(stopped.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: "config.json",
          message: expect.stringMatching(WARNING),
          fix: expect.stringContaining("daemon.authToken"),
        }),
      ]),
    );
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({ daemon: { bind: "0.0.0.0", authToken: "open-door-token-5511" } }),
      { mode: 0o600 },
    );
    d = await startDaemonProcess({ home });
    expect(d.logs()).not.toMatch(WARNING);
    expect((await rawRequest(d.port, { method: "GET", path: "/sessions", headers: XFF })).status).toBe(401);
    const after = JSON.parse((await runCli(["doctor", "--json"], { home })).stdout) as {
      findings: Array<{ message: string }>;
    };
    expect(after.findings.some((f) => WARNING.test(f.message))).toBe(false);
  });
});
