/**
 * Idempotent sentinel creates through the real daemon (issue 23): the `Idempotency-Key` header of
 * `POST /sentinels`, the `idempotencyKey` argument of `sentinel_watch` and `svc sentinel watch
 * --idempotency-key` all go through the one service rule; creates under load are all answered.
 */
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { mcpClient } from "./github-helpers.js";

const fx = useDaemonProcess({ prefix: "svc-e2e-idem-" });

const watchSpec = (subject: string, sessionId = "ses_idem") => ({
  match: [{ subject }],
  until: { kind: "never" },
  target: { kind: "session", sessionId },
});

async function post(
  spec: unknown,
  headers: Record<string, string> = {},
  auth = true,
): Promise<{ status: number; body: any }> {
  const res = await fx.daemon.fetch("/sentinels", {
    method: "POST",
    auth,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(spec),
  });
  return { status: res.status, body: await res.json() };
}
const ids = async (): Promise<string[]> =>
  ((await (await fx.daemon.fetch("/sentinels")).json()) as { sentinels: Array<{ id: string }> }).sentinels.map(
    (s) => s.id,
  );

describe("POST /sentinels with Idempotency-Key", () => {
  it("the same key and body twice: one sentinel, both answers 201 with the same id", async () => {
    const first = await post(watchSpec("idem:a"), { "idempotency-key": "rest-1" });
    const second = await post(watchSpec("idem:a"), { "idempotency-key": "rest-1" });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).toBe(first.body.id);
    expect((await ids()).filter((id) => id === first.body.id)).toHaveLength(1);
    expect(first.body).not.toHaveProperty("idempotency");
  });

  it("the same key with another body is 422 idempotency_key_reused; nothing is created", async () => {
    const first = await post(watchSpec("idem:b"), { "idempotency-key": "rest-2" });
    const before = await ids();
    const other = await post(watchSpec("idem:other"), { "idempotency-key": "rest-2" });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", details: { sentinelId: first.body.id } });
    expect(await ids()).toEqual(before);
  });

  it("a bad key, or two Idempotency-Key headers, is a 400 invalid_input naming the key", async () => {
    const long = await post(watchSpec("idem:c"), { "idempotency-key": "k".repeat(256) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({
      code: "invalid_input",
      details: [{ path: "idempotencyKey", message: expect.stringMatching(/at most 255/) }],
    });
    // Two header lines (fetch would join them into one "one, two" value, a valid key).
    const twice = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${fx.daemon.baseUrl}/sentinels`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${fx.daemon.token}`,
          "content-type": "application/json",
          "idempotency-key": ["one", "two"],
        },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, text }));
      });
      req.on("error", reject);
      req.end(JSON.stringify(watchSpec("idem:c")));
    });
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.text).error.message).toMatch(/one Idempotency-Key header/);
  });

  it("keys are per caller: a loopback caller without the token gets its own sentinel for the same key", async () => {
    const withToken = await post(watchSpec("idem:d"), { "idempotency-key": "rest-3" });
    const loopback = await post(watchSpec("idem:d"), { "idempotency-key": "rest-3" }, false);
    expect(loopback.status).toBe(201);
    expect(loopback.body.id).not.toBe(withToken.body.id);
  });

  it("100 concurrent creates are all answered; 20 concurrent with one key make one sentinel", async () => {
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => post(watchSpec(`load:${i}`, `ses_${i}`))));
    expect(all.map((r) => r.status)).toEqual(Array(100).fill(201));
    const keyed = await Promise.all(
      Array.from({ length: 20 }, () => post(watchSpec("idem:burst"), { "idempotency-key": "burst" })),
    );
    expect(new Set(keyed.map((r) => r.body.id)).size).toBe(1);
    const stored = JSON.parse(await readFile(join(fx.home, "sentinels.json"), "utf8")).sentinels as Array<{
      id: string;
      spec: { match: Array<{ subject: string }> };
    }>;
    expect(stored.filter((s) => s.spec.match[0]!.subject.startsWith("load:"))).toHaveLength(100);
    expect(stored.filter((s) => s.spec.match[0]!.subject === "idem:burst")).toHaveLength(1);
  });

  it("the key survives a daemon restart", async () => {
    const first = await post(watchSpec("idem:e"), { "idempotency-key": "restart" });
    await fx.start();
    const again = await post(watchSpec("idem:e"), { "idempotency-key": "restart" });
    expect([again.status, again.body.id]).toEqual([201, first.body.id]);
  });
});

describe("the same rule on MCP and the CLI", () => {
  it("sentinel_watch takes idempotencyKey; the same caller's REST create with that key and body gets the same sentinel", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    try {
      const args = { subject: "idem:mcp", sessionId: "ses_mcp", until: { kind: "never" }, idempotencyKey: "mcp-1" };
      const first = await mcp.json("sentinel_watch", args);
      const second = await mcp.json("sentinel_watch", args);
      expect(second.id).toBe(first.id);
      const rest = await post(watchSpec("idem:mcp", "ses_mcp"), { "idempotency-key": "mcp-1" });
      expect(rest.body.id).toBe(first.id);
      const other = await mcp
        .json("sentinel_watch", { ...args, sessionId: "ses_other" })
        .catch((e: { result: unknown }) => e.result);
      expect(other).toMatchObject({ error: { code: "idempotency_key_reused" } });
    } finally {
      await mcp.close();
    }
  });

  it("svc sentinel watch --idempotency-key: a retry prints the same sentinel; a bad key is a usage error (exit 2)", async () => {
    const cli = (args: string[]) => runCli(["sentinel", "watch", ...args], { home: fx.home });
    const a = await cli(["idem:cli", "--session", "ses_cli", "--idempotency-key", "cli-1", "--json"]);
    const b = await cli(["idem:cli", "--session", "ses_cli", "--idempotency-key", "cli-1", "--json"]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(JSON.parse(b.stdout).id).toBe(JSON.parse(a.stdout).id);
    const bad = await cli(["idem:cli", "--session", "ses_cli", "--idempotency-key", "has\nnewline"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--idempotency-key: .*printable ASCII/);
  });
});
