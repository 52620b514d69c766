/**
 * Issue 27, endpoint health, end to end: a real daemon, a real HTTPS receiver on loopback that
 * verifies every delivery with the standardwebhooks package. A receiver answering 500 is suspended
 * after 5 rows in a row ran out of attempts; its new events wait as pending (never attempted), also
 * across a restart; `svc sentinel resume` or a successful `svc webhooks check` sends each pending
 * event once. A slow receiver holds at most its lane's 16 slots while a fast one gets everything.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess, type DaemonFixture, type DaemonHome } from "../support/cli.js";
import {
  LOOPBACK_CONFIG,
  startWebhookReceiver,
  until as untilDone,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 91).toString("base64")}`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const json = { "content-type": "application/json" };
/** Suspension takes 5 attempts with waits of 7.5 s in all: a longer guard than the receiver helper's default. */
const until = <T>(fn: () => Promise<T | undefined | false> | T | undefined | false, what: string) =>
  untilDone(fn, what, 90_000);

/** The daemon's webhook sentinel API, as the tests use it. */
function sentinelApi(fx: DaemonFixture<DaemonHome>) {
  const view = async (id: string) => (await (await fx.daemon.fetch(`/sentinels/${id}`)).json()) as any;
  return {
    view,
    rows: async (id: string) => (await view(id)).target.outbox.rows as Array<Record<string, any>>,
    async create(subject: string, url: string): Promise<string> {
      const res = await fx.daemon.fetch("/sentinels", {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          match: [{ subject: `${subject}:*` }],
          until: { kind: "never" },
          provider: "agentpush",
          target: { kind: "webhook", url, secret: SECRET },
        }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    },
    async push(subject: string, ...ids: string[]): Promise<void> {
      const res = await fx.daemon.fetch("/providers/agentpush/events", {
        method: "POST",
        headers: json,
        body: JSON.stringify(ids.map((id) => ({ id, type: "eh.test", subjects: [`${subject}:a`] }))),
      });
      expect(res.status).toBe(200);
    },
    /** The daemon events of this daemon life so far, read from /events' backlog until `type` is among them. */
    async eventsUpTo(type: string): Promise<Array<{ type: string; data: any }>> {
      const stream = await fx.daemon.fetch("/events", { headers: { "last-event-id": "0" } });
      const reader = stream.body!.getReader();
      let sse = "";
      while (!sse.includes(`event: ${type}\n`)) {
        const { value, done } = await reader.read();
        if (done) break;
        sse += new TextDecoder().decode(value);
      }
      await reader.cancel();
      return sse
        .split("\n\n")
        .map((block) => block.split("\n").find((l) => l.startsWith("data: ")))
        .filter((l): l is string => l !== undefined)
        .map((l) => JSON.parse(l.slice(6)) as { type: string; data: any })
        .map(({ type, data }) => ({ type, data }));
    },
    async mcp(token: boolean): Promise<Client> {
      const client = new Client({ name: "t", version: "0" });
      const headers: Record<string, string> = token ? { authorization: `Bearer ${fx.daemon.token}` } : {};
      await client.connect(
        new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), { requestInit: { headers } }),
      );
      return client;
    },
  };
}

describe("endpoint health (real daemon, real HTTPS receiver)", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => rx?.close());
  const fx = useDaemonProcess({ prefix: "svc-e2e-health-", config: LOOPBACK_CONFIG });
  const api = sentinelApi(fx);
  const cli = (args: string[]) => runCli(args, { home: fx.home });
  const sent = (eventId: string) => rx.deliveries.filter((d) => d.id === eventId).length;
  const suspendedView = (id: string) =>
    until(
      async () => ((await api.view(id)).spec.target.deliveryStatus.active === false ? api.view(id) : false),
      `${id} suspended`,
    );

  it("suspends after 5 failed rows; new events wait pending, unsent, across a restart; svc sentinel resume sends each once", async () => {
    rx.respond = (_d, res) => res.writeHead(500).end("down");
    const id = await api.create("eh", rx.url);
    await api.push("eh", "f0", "f1", "f2", "f3", "f4");
    const v = await suspendedView(id);
    expect(v.spec.target.deliveryStatus).toEqual({
      active: false,
      reason: "consecutive_failures",
      since: expect.stringMatching(ISO),
      lastError: "http_5xx",
    });
    expect(JSON.stringify(v.spec.target.deliveryStatus)).not.toContain("down");
    const events = await api.eventsUpTo("sentinel:delivery-suspended");
    expect(events.filter((e) => e.type === "sentinel:delivery-suspended")).toEqual([
      {
        type: "sentinel:delivery-suspended",
        data: { sentinelId: id, reason: "consecutive_failures", since: v.spec.target.deliveryStatus.since },
      },
    ]);
    expect((await cli(["sentinel", "list"])).stdout).toMatch(new RegExp(`${id}\\s+active \\(delivery suspended\\)`));
    expect((await cli(["sentinel", "status", id])).stdout).toMatch(
      new RegExp(`delivery\\s+SUSPENDED since .*http_5xx.*svc sentinel resume ${id}`),
    );
    const client = await api.mcp(false);
    const listed = (await client.callTool({ name: "sentinel_list", arguments: {} })).structuredContent as {
      sentinels: Array<{ id: string; spec: { target: any } }>;
    };
    expect(listed.sentinels.find((s) => s.id === id)!.spec.target.deliveryStatus).toMatchObject({
      active: false,
      reason: "consecutive_failures",
    });
    // sentinel_resume needs the token, like POST /sentinels/:id/resume.
    const refused = await client.callTool({ name: "sentinel_resume", arguments: { sentinelId: id } });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toMatch(/bearer token/);
    await client.close();
    expect((await fx.daemon.fetch(`/sentinels/${id}/resume`, { method: "POST", auth: false })).status).toBe(401);

    // Recovered, but still suspended: new events are accepted as pending rows and not attempted.
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    await api.push("eh", "n1", "n2");
    const waiting = async () => (await api.rows(id)).filter((r) => r.eventId === "n1" || r.eventId === "n2");
    expect((await waiting()).map((r) => [r.eventId, r.status, r.attempts])).toEqual([
      ["n1", "pending", 0],
      ["n2", "pending", 0],
    ]);

    // A restart keeps the suspension; still nothing sent.
    await fx.start();
    expect((await api.view(id)).spec.target.deliveryStatus).toMatchObject({
      active: false,
      reason: "consecutive_failures",
    });
    expect((await waiting()).map((r) => [r.status, r.attempts])).toEqual([
      ["pending", 0],
      ["pending", 0],
    ]);
    expect(sent("n1") + sent("n2")).toBe(0);

    const r = await cli(["sentinel", "resume", id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`resumed ${id}: 2 pending event\\(s\\) being sent`));
    await until(async () => (await waiting()).every((row) => row.status === "delivered"), "n1 and n2 delivered");
    expect([sent("n1"), sent("n2")]).toEqual([1, 1]);
    expect(rx.deliveries.find((d) => d.id === "n1")).toMatchObject({ verifiedBy: [0], subscriptionId: id });
    const resumed = (await api.eventsUpTo("sentinel:delivery-resumed")).filter(
      (e) => e.type === "sentinel:delivery-resumed",
    );
    expect(resumed).toEqual([{ type: "sentinel:delivery-resumed", data: { sentinelId: id, pending: 2 } }]);
    expect((await api.view(id)).spec.target.deliveryStatus).toEqual({
      active: true,
      lastDeliveryAt: expect.stringMatching(ISO),
      lastError: null,
    });
    expect((await cli(["sentinel", "resume", id])).stdout).toMatch(/was not suspended; nothing changed/);
  });

  it("svc webhooks check challenges the URL's suspended sentinels with their own secret and resumes those that answer", async () => {
    rx.respond = (_d, res) => res.writeHead(503).end();
    const id = await api.create("wc", rx.url);
    await api.push("wc", "g0", "g1", "g2", "g3", "g4");
    await suspendedView(id);
    rx.respond = (_d, res) => res.writeHead(200).end("ok");
    await api.push("wc", "w1");
    const challenges = rx.challenges;
    const r = await cli(["webhooks", "check", rx.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/allowed/);
    expect(r.stdout).toMatch(
      new RegExp(`resumed ${id}: the callback answered the challenge; 1 pending event\\(s\\) being sent`),
    );
    // One challenge: the other sentinel of this URL is not suspended and is not contacted.
    expect(rx.challenges).toBe(challenges + 1);
    await until(() => sent("w1") === 1, "w1 delivered");
    const again = await cli(["webhooks", "check", rx.url, "--json"]);
    expect(JSON.parse(again.stdout).daemon).toEqual({ checked: [] });
    // With the token, sentinel_resume on a sentinel that is not suspended changes nothing.
    const client = await api.mcp(true);
    const out = await client.callTool({ name: "sentinel_resume", arguments: { sentinelId: id } });
    await client.close();
    expect(out.structuredContent).toEqual({ sentinelId: id, resumed: false, pending: 0 });
  });
});

describe("per-callback-host lanes (real daemon, two real receivers)", () => {
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;
  beforeAll(async () => {
    [slow, fast] = await Promise.all([startWebhookReceiver([SECRET]), startWebhookReceiver([SECRET])]);
  });
  afterAll(async () => {
    await slow?.close();
    await fast?.close();
  });
  const fx = useDaemonProcess({ prefix: "svc-e2e-lanes-", config: LOOPBACK_CONFIG });
  const api = sentinelApi(fx);

  it("a receiver that holds every request gets at most 16 at once, while another on its own host:port gets all its events", async () => {
    // Lanes are keyed by host:port (the URL's host): these are two callbacks on 127.0.0.1.
    expect(slow.port).not.toBe(fast.port);
    const held: Array<() => void> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    // A request is in flight from its arrival until it is answered (or the daemon gives up on it).
    slow.respond = (_d, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let over = false;
      const end = () => void (over ? undefined : ((over = true), inFlight--));
      res.on("close", end);
      held.push(() => {
        end();
        res.writeHead(200).end("ok");
      });
    };
    const slowId = await api.create("slow", slow.url);
    const fastId = await api.create("fast", fast.url);
    await api.push("slow", ...Array.from({ length: 40 }, (_, i) => `s${i}`));
    await api.push("fast", ...Array.from({ length: 20 }, (_, i) => `f${i}`));
    const fastDone = async () => (await api.rows(fastId)).filter((r) => r.status === "delivered").length === 20;
    await until(
      async () => maxInFlight === 16 && (await fastDone()),
      "the fast events delivered and the slow lane full",
    );
    // Nothing of the slow receiver's was answered: its rows all wait, its lane never went past 16.
    expect((await api.rows(slowId)).every((r) => r.status === "pending")).toBe(true);
    expect(new Set(fast.deliveries.map((d) => d.id)).size).toBe(20);
    expect(maxInFlight).toBe(16);
    await until(async () => {
      held.splice(0).forEach((answer) => answer());
      return (await api.rows(slowId)).every((r) => r.status === "delivered");
    }, "the slow events delivered once answered");
    expect(maxInFlight).toBe(16);
    expect(new Set(slow.deliveries.map((d) => d.id)).size).toBe(40);
  });
});
