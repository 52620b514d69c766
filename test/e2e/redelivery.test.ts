/**
 * Issue 12: redelivery and saying what happened. A receiver that rejected events can get them
 * again (`svc sentinel replay`, `POST /sentinels/:id/replay`, `sentinel_replay`) with the exact
 * stored bytes and the same webhook-id; the CLI says "accepted" for a push, counts delivered rows
 * only, shows the outbox as a table; a rotation without a given secret passes a receiver that
 * verifies challenges with the secret it knows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 77).toString("base64")}`;

async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("redelivery and the sentinel views (real daemon, real HTTPS receiver)", () => {
  let rx: WebhookReceiver;
  let id: string;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-replay-", config: LOOPBACK_CONFIG });
  const cli = (args: string[]) => runCli(args, { home: fx.home });
  const rows = async () => ((await (await fx.daemon.fetch(`/sentinels/${id}`)).json()) as any).target.outbox.rows as Array<Record<string, any>>;

  beforeAll(async () => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: [{ subject: "rd:*" }], until: { kind: "never" }, provider: "agentpush", target: { kind: "webhook", url: rx.url, secret: SECRET } }),
    });
    expect(res.status).toBe(201);
    id = ((await res.json()) as { id: string }).id;
  });

  it("push says accepted; a rejected event is dead; list counts delivered rows only; status is a table", async () => {
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    const pushed = await cli(["sentinel", "push", "rd:a", "--type", "rd.test", "--id", "rd1"]);
    expect(pushed.stdout.trim()).toBe("pushed rd1: 1 match(es), 1 accepted, 0 duplicate, 0 expired");
    await until(async () => (await rows()).find((r) => r.eventId === "rd1" && r.status === "dead"), "rd1 dead");
    const list = await cli(["sentinel", "list"]);
    expect(list.stdout).toMatch(new RegExp(`${id}.*0 \\(1 dead\\)`));
    const status = await cli(["sentinel", "status", id]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/outbox\s+0 delivered, 0 pending, 1 dead/);
    expect(status.stdout).toMatch(/EVENT\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+CREATED\s+LAST ERROR/);
    expect(status.stdout).toMatch(/rd1\s+dead \(delivered_rejected\)\s+1\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+.*410/);
    expect(JSON.parse((await cli(["sentinel", "status", id, "--json"])).stdout).target.outbox.dead).toBe(1);
  });

  it("replay without the token is refused on REST and MCP; a removed sentinel's rows cannot be replayed", async () => {
    expect((await fx.daemon.fetch(`/sentinels/${id}/replay`, { method: "POST", auth: false })).status).toBe(401);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    const out = await client.callTool({ name: "sentinel_replay", arguments: { sentinelId: id } });
    expect(out.isError).toBe(true);
    expect((out.content as Array<{ text: string }>)[0]!.text).toMatch(/bearer token/);
    await client.close();
    const gone = await fx.daemon.fetch(`/sentinels/snt_00000000000000000000000000/replay`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(gone.status).toBe(404);
    expect((await rows()).find((r) => r.eventId === "rd1")!.status).toBe("dead");
  });

  it("svc sentinel replay sends the dead row again: same webhook-id, identical bytes, attempts reset, recorded", async () => {
    const first = rx.deliveries.find((d) => d.id === "rd1")!;
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    const r = await cli(["sentinel", "replay", id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/replaying rd1 \(was dead; replay #1\)/);
    await until(async () => (await rows()).find((x) => x.eventId === "rd1" && x.status === "delivered"), "rd1 delivered");
    const again = rx.deliveries.filter((d) => d.id === "rd1");
    expect(again).toHaveLength(2);
    expect(again[1]!.sha).toBe(first.sha);
    const row = (await rows()).find((x) => x.eventId === "rd1")!;
    expect(row).toMatchObject({ status: "delivered", attempts: 1, lastError: null, replays: 1 });
    expect(typeof row.replayedAt).toBe("number");
    expect((await cli(["sentinel", "list"])).stdout).toMatch(new RegExp(`${id}.*\\s1\\s`));
    // Nothing dead is left: a plain replay finds nothing; --event takes a delivered row too.
    expect((await cli(["sentinel", "replay", id])).stdout).toMatch(/nothing to replay/);
    const byEvent = await cli(["sentinel", "replay", id, "--event", "rd1", "--json"]);
    expect(JSON.parse(byEvent.stdout).replayed).toEqual([expect.objectContaining({ eventId: "rd1", was: "delivered", replays: 2 })]);
    await until(() => rx.deliveries.filter((d) => d.id === "rd1").length === 3, "third delivery of rd1");
  });

  it("a row delivered after a failed attempt keeps no lastError", async () => {
    let calls = 0;
    rx.respond = (_d, res) => res.writeHead(calls++ === 0 ? 503 : 200).end();
    await cli(["sentinel", "push", "rd:b", "--type", "rd.test", "--id", "rd2"]);
    const row = await until(async () => (await rows()).find((r) => r.eventId === "rd2" && r.status === "delivered"), "rd2 delivered");
    expect(row).toMatchObject({ attempts: 2, lastError: null });
  });

  it("rotation without --secret passes a receiver that verifies challenges with the secret it knows", async () => {
    rx.verifyChallenges = true;
    const r = await cli(["sentinel", "rotate-secret", id, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { rotated: boolean; secret: string };
    expect(out.rotated).toBe(true);
    expect(out.secret).toMatch(/^whsec_/);
    // The receiver learns the new secret from the answer and keeps the old one for the window.
    rx.secrets.push(out.secret);
    rx.respond = (_d, res) => res.writeHead(200).end();
    await cli(["sentinel", "push", "rd:c", "--type", "rd.test", "--id", "rd3"]);
    const d = await until(() => rx.deliveries.find((x) => x.id === "rd3"), "rd3");
    expect(d.verifiedBy.sort()).toEqual([0, 1]);
  });
});
