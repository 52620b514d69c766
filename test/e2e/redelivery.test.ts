/**
 * Issue 12: redelivery and saying what happened. A receiver that rejected events can get them
 * again (`svc sentinel replay`, `POST /sentinels/:id/replay`, `sentinel_replay`) with the exact
 * stored bytes and the same webhook-id; the CLI says "accepted" for a push, counts delivered rows
 * only, shows the outbox as a table; a rotation without a given secret passes a receiver that
 * verifies challenges with the secret it knows.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 77).toString("base64")}`;

describe("redelivery and the sentinel views (real daemon, real HTTPS receiver)", () => {
  let rx: WebhookReceiver;
  let id: string;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-replay-", config: LOOPBACK_CONFIG });
  const cli = (args: string[]) => runCli(args, { home: fx.home });
  const rows = async () =>
    ((await (await fx.daemon.fetch(`/sentinels/${id}`)).json()) as any).target.outbox.rows as Array<
      Record<string, any>
    >;

  beforeAll(async () => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "rd:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
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
    expect(status.stdout).toMatch(
      /rd1\s+dead \(delivered_rejected\)\s+1\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+.*410/,
    );
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
    const gone = await fx.daemon.fetch(`/sentinels/snt_00000000000000000000000000/replay`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(gone.status).toBe(404);
    expect((await rows()).find((r) => r.eventId === "rd1")!.status).toBe("dead");
  });

  it("svc sentinel replay sends the dead row again: same webhook-id, identical bytes, attempts reset, recorded", async () => {
    const first = rx.deliveries.find((d) => d.id === "rd1")!;
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    const r = await cli(["sentinel", "replay", id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/replaying rd1 \(was dead; replay #1\)/);
    await until(
      async () => (await rows()).find((x) => x.eventId === "rd1" && x.status === "delivered"),
      "rd1 delivered",
    );
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
    expect(JSON.parse(byEvent.stdout).replayed).toEqual([
      expect.objectContaining({ eventId: "rd1", was: "delivered", replays: 2 }),
    ]);
    await until(() => rx.deliveries.filter((d) => d.id === "rd1").length === 3, "third delivery of rd1");
  });

  it("a row delivered after a failed attempt keeps no lastError", async () => {
    let calls = 0;
    rx.respond = (_d, res) => res.writeHead(calls++ === 0 ? 503 : 200).end();
    await cli(["sentinel", "push", "rd:b", "--type", "rd.test", "--id", "rd2"]);
    const row = await until(
      async () => (await rows()).find((r) => r.eventId === "rd2" && r.status === "delivered"),
      "rd2 delivered",
    );
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

describe("replay selectors, the MCP tool and the refusals (real daemon)", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-replay2-", config: LOOPBACK_CONFIG });
  const cli = (args: string[]) => runCli(args, { home: fx.home });
  const json = { "content-type": "application/json" };
  const rowsOf = async (sid: string) =>
    ((await (await fx.daemon.fetch(`/sentinels/${sid}`)).json()) as any).target.outbox.rows as Array<
      Record<string, any>
    >;
  const create = async (subject: string) => {
    const res = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        match: [{ subject }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const push = async (subject: string, id: string) => {
    const res = await fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ id, type: "rd.test", subjects: [subject] }),
    });
    expect(res.status).toBe(200);
  };
  const replayRest = (sid: string, body: string) =>
    fx.daemon.fetch(`/sentinels/${sid}/replay`, { method: "POST", headers: json, body });
  const sent = (eventId: string) => rx.deliveries.filter((d) => d.id === eventId).length;

  it("--since, --dead and --event select rows; the MCP tool with the token replays like the CLI", async () => {
    const sid = await create("sel:*");
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    await push("sel:a", "old1");
    await push("sel:a", "old2");
    await until(async () => (await rowsOf(sid)).filter((r) => r.status === "dead").length === 2, "old1, old2 dead");
    await new Promise((r) => setTimeout(r, 20));
    const mid = Date.now();
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    await push("sel:a", "new1");
    await until(
      async () => (await rowsOf(sid)).find((r) => r.eventId === "new1" && r.status === "delivered"),
      "new1 delivered",
    );

    // --since with --dead: nothing dead since mid; without --dead: the delivered row since mid.
    expect((await cli(["sentinel", "replay", sid, "--since", new Date(mid).toISOString(), "--dead"])).stdout).toMatch(
      /nothing to replay/,
    );
    const since = JSON.parse((await cli(["sentinel", "replay", sid, "--since", String(mid), "--json"])).stdout);
    expect(since.replayed.map((r: { eventId: string }) => r.eventId)).toEqual(["new1"]);
    await until(() => sent("new1") === 2, "new1 sent again");
    expect(sent("old1") + sent("old2")).toBe(2);

    // The MCP tool, with the token: every dead row, the same bytes and webhook-id as the first time.
    const client = new Client({ name: "t", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    const out = await client.callTool({
      name: "sentinel_replay",
      arguments: { sentinelId: sid, since: mid - 60_000, dead: true },
    });
    await client.close();
    expect(out.isError, JSON.stringify(out.content)).not.toBe(true);
    const replayed = (out.structuredContent as { replayed: Array<{ eventId: string; was: string; replays: number }> })
      .replayed;
    expect(replayed.map((r) => [r.eventId, r.was, r.replays]).sort()).toEqual([
      ["old1", "dead", 1],
      ["old2", "dead", 1],
    ]);
    await until(async () => (await rowsOf(sid)).every((r) => r.status === "delivered"), "every row delivered");
    for (const id of ["old1", "old2"]) {
      const [first, again] = rx.deliveries.filter((d) => d.id === id);
      expect(again!.sha, id).toBe(first!.sha);
      expect((await rowsOf(sid)).find((r) => r.eventId === id)).toMatchObject({
        status: "delivered",
        attempts: 1,
        replays: 1,
        lastError: null,
      });
    }
    // --event of an unknown event, and bodies that are not the documented object: refused.
    expect((await cli(["sentinel", "replay", sid, "--event", "nope"])).code).not.toBe(0);
    for (const body of ["null", "[1]", '"x"', '{"eventID":"old1"}', '{"since":"yesterday"}']) {
      const res = await replayRest(sid, body);
      expect(res.status, body).toBe(400);
    }
    expect(sent("old1")).toBe(2);
  });

  it("the dead rows of a removed sentinel are refused on REST, the CLI and MCP; nothing is sent", async () => {
    const sid = await create("gone:*");
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    await push("gone:a", "g1");
    await until(async () => (await rowsOf(sid)).find((r) => r.eventId === "g1" && r.status === "dead"), "g1 dead");
    expect((await fx.daemon.fetch(`/sentinels/${sid}`, { method: "DELETE" })).status).toBeLessThan(300);
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    for (const body of ["{}", '{"eventId":"g1"}', '{"since":0}']) {
      const res = await replayRest(sid, body);
      expect(res.status, body).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /removed sentinel cannot be replayed/,
      );
    }
    const r = await cli(["sentinel", "replay", sid, "--event", "g1"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot be replayed/);
    const client = new Client({ name: "t", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    const out = await client.callTool({ name: "sentinel_replay", arguments: { sentinelId: sid } });
    await client.close();
    expect(out.isError).toBe(true);
    await new Promise((res) => setTimeout(res, 300));
    expect(sent("g1")).toBe(1);
  });

  it("a replay goes through the SSRF gate again: once the receiver's subnet is no longer allowed, nothing is sent", async () => {
    const sid = await create("gate:*");
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    await push("gate:a", "gt1");
    await until(async () => (await rowsOf(sid)).find((r) => r.eventId === "gt1" && r.status === "dead"), "gt1 dead");
    const client = new Client({ name: "t", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    const set = await client.callTool({ name: "config_set", arguments: { key: "webhooks.allowSubnets", value: [] } });
    expect(set.isError, JSON.stringify(set.content)).not.toBe(true);
    expect((set.structuredContent as { applied: boolean }).applied).toBe(true);
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    const out = await client.callTool({ name: "sentinel_replay", arguments: { sentinelId: sid, eventId: "gt1" } });
    expect(out.isError, JSON.stringify(out.content)).not.toBe(true);
    const row = await until(
      async () => (await rowsOf(sid)).find((r) => r.eventId === "gt1" && r.status === "dead" && r.replays === 1),
      "gt1 dead again",
    );
    expect(JSON.stringify(row)).toMatch(/ssrf|private|127\.0\.0\.1/i);
    expect(sent("gt1")).toBe(1);
    // Allowed again, the same row goes out.
    await client.callTool({
      name: "config_set",
      arguments: { key: "webhooks.allowSubnets", value: ["127.0.0.0/8", "::1/128"] },
    });
    await client.callTool({ name: "sentinel_replay", arguments: { sentinelId: sid, eventId: "gt1" } });
    await until(() => sent("gt1") === 2, "gt1 sent after the subnet is allowed again");
    await client.close();
  });

  it("a sentinel whose secret no longer decodes is refused with 409 and its dead row is left as it was", async () => {
    const sid = await create("bad:*");
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    await push("bad:a", "b1");
    const before = await until(
      async () => (await rowsOf(sid)).find((r) => r.eventId === "b1" && r.status === "dead"),
      "b1 dead",
    );
    await fx.daemon.stop();
    const vaultPath = join(fx.home, "sentinels-secrets.json");
    const vault = JSON.parse(await readFile(vaultPath, "utf8")) as {
      secrets: Record<string, { sentinelId: string; secret: string }>;
    };
    for (const row of Object.values(vault.secrets)) if (row.sentinelId === sid) row.secret = "whsec_not*base64*at*all";
    await writeFile(vaultPath, JSON.stringify(vault), { mode: 0o600 });
    await fx.start();
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    const res = await replayRest(sid, "{}");
    expect(res.status).toBe(409);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toMatch(/cannot sign.*rotate/);
    expect(message).not.toContain("not*base64");
    const after = (await rowsOf(sid)).find((r) => r.eventId === "b1")!;
    expect(after).toMatchObject({ status: "dead", attempts: before.attempts });
    expect(after.replays ?? 0).toBe(0);
    expect(sent("b1")).toBe(1);
  });
});
