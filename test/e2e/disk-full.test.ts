/**
 * Issue 12's title, recovery from a full disk, on a real filesystem: $SVC_HOME is a small tmpfs
 * (mounting one needs root; elsewhere the test is skipped), filled to the last block while the
 * daemon runs. A full disk is a clear 503 that says so (it was a 500 "internal error" for a new
 * sentinel, the cause only in the log), and once space is freed the same requests pass and the
 * daemon stops and starts again on the same files.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { fill, tmpfsHome } from "../support/tmpfs-home.js";
import { mcpClient } from "./github-helpers.js";

let mounted = false;

describe("a full disk under $SVC_HOME (real daemon on a 4 MiB tmpfs)", () => {
  const fx = useDaemonProcess({
    makeHome: async () => {
      const t = await tmpfsHome("svc-e2e-diskfull-", "4m");
      mounted = t.mounted;
      return t;
    },
  });
  const json = { "content-type": "application/json" };
  const watch = (sessionId: string) =>
    fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        match: [{ subject: "disk:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "session", sessionId },
      }),
    });
  const push = (id: string) =>
    fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ id, type: "disk.test", subjects: ["disk:a"] }),
    });

  it("says the disk is full on REST, MCP and the CLI, and everything passes again once space is freed", async (ctx) => {
    if (!mounted) ctx.skip();
    expect((await watch("ses_disk_1")).status).toBe(201);
    const filler = join(fx.home, "filler");
    fill(filler);

    const refused = await watch("ses_disk_2");
    expect(refused.status).toBe(503);
    const e = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(e.code).toBe("unavailable");
    expect(e.message).toMatch(/the disk is full \(ENOSPC[^)]*\): free space .*then try again/);
    const mcp = await mcpClient(fx.daemon.baseUrl);
    const viaMcp = await mcp.callTool({
      name: "sentinel_watch",
      arguments: { subject: "disk:b", provider: "agentpush", sessionId: "ses_disk_3" },
    });
    await mcp.close();
    expect(viaMcp.isError).toBe(true);
    expect((viaMcp.content as Array<{ text: string }>)[0]!.text).toMatch(/the disk is full/);
    const cli = await runCli(["sentinel", "watch", "disk:c", "--provider", "agentpush", "--session", "ses_disk_4"], {
      home: fx.home,
    });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/the disk is full/);
    expect((await push("full1")).status).toBe(503);

    rmSync(filler);
    expect((await watch("ses_disk_2")).status).toBe(201);
    const accepted = await push("full1");
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as { accepted: number }).accepted).toBe(1);

    // A clean stop and a start on the same files: both sentinels are there, the event counted once.
    await fx.start();
    const list = (await (await fx.daemon.fetch("/sentinels")).json()) as {
      sentinels: Array<{ spec: { target: { sessionId: string } }; deliveredCount: number }>;
    };
    const sessions = list.sentinels.map((s) => s.spec.target.sessionId).sort();
    expect(sessions).toEqual(["ses_disk_1", "ses_disk_2"]);
    expect((await push("full1")).status).toBe(200);
  });

  it("a stop whose compaction fails on a full disk leaves a home that starts once space is freed, every event kept", async (ctx) => {
    if (!mounted) ctx.skip();
    expect((await watch("ses_disk_5")).status).toBe(201);
    for (let i = 0; i < 20; i++) expect((await push(`keep${i}`)).status).toBe(200);
    const filler = join(fx.home, "filler2");
    fill(filler);
    // The stop's compactions (outbox, dedup) find no space; the daemon still exits.
    await fx.daemon.stop();
    rmSync(filler);
    await fx.start();
    // Every event accepted before the disk filled is still known: pushed again, each is a duplicate.
    for (let i = 0; i < 20; i++) {
      const again = (await (await push(`keep${i}`)).json()) as {
        matched: Array<{ sentinelId: string; outcome: string }>;
      };
      expect(
        again.matched.every((m) => m.outcome === "duplicate"),
        `keep${i}`,
      ).toBe(true);
    }
  });
});
