/**
 * The `sessions` provider end to end (issue 27): a real daemon, a real ACP session, the daemon's
 * own session events turned into sentinel events and delivered by the webhook target to a real
 * HTTPS receiver; `session.ended` ends a sentinel watching that session until it is terminal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionLifecycleEventType } from "../../plugins/session-events/event-type.js";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";
import { useDaemonProcess } from "../support/cli.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { until } from "../support/until.js";

const SECRET = `whsec_${Buffer.alloc(32, 27).toString("base64")}`;

describe("session lifecycle events reach a sentinel (real daemon, real session, real receiver)", () => {
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    await rx?.close();
  });
  const fx = useDaemonProcess({
    prefix: "svc-e2e-session-events-",
    config: { ...LOOPBACK_CONFIG, acpAgents: FIXTURE_AGENTS },
  });

  const post = async (path: string, body?: unknown) => {
    const res = await fx.daemon.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const sentinel = async (args: Record<string, unknown>, until: Record<string, unknown>) => {
    const res = await post("/sentinels", {
      match: sessionLifecycleEventType.toMatch(args),
      provider: "sessions",
      until,
      target: { kind: "webhook", url: rx.url, secret: SECRET },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  /** The delivered events (the webhook envelope, or an MCP occurrence), optionally of one sentinel. */
  const delivered = (sentinelId?: string) =>
    rx.deliveries
      .filter((d) => sentinelId === undefined || d.subscriptionId === sentinelId)
      .map((d) => JSON.parse(d.body) as Record<string, any>)
      .map(
        (b) =>
          (b.eventId
            ? { id: b.eventId, type: b.data.type, subjects: b.data.subjects, data: b.data.payload }
            : { id: b.id, type: b.type, subjects: b.subjects, data: b.data }) as {
            id: string;
            type: string;
            subjects: string[];
            data: Record<string, unknown>;
          },
      );
  const events = (sessionId: string) => delivered().filter((e) => e.subjects[0] === `session:${sessionId}`);

  it("delivers started, turn-ended and ended for every session, in order, with stable ids", async () => {
    await sentinel({ types: ["session.started", "session.turn-ended", "session.ended"] }, { kind: "never" });
    const { body: started } = await post("/sessions", { adapter: "echo", cwd: fx.home, prompt: "hello" });
    const id = started.descriptor.id as string;
    await until(
      () => (events(id).some((e) => e.type === "session.turn-ended") ? true : undefined),
      "session.turn-ended",
      20_000,
    );
    expect((await post(`/sessions/${id}/stop`)).status).toBeLessThan(300);
    const seen = await until(
      () => (events(id).some((e) => e.type === "session.ended") ? events(id) : undefined),
      "session.ended",
      20_000,
    );
    expect(seen.map((e) => e.type)).toEqual(["session.started", "session.turn-ended", "session.ended"]);
    expect(seen[0]!.data).toMatchObject({ sessionId: id, adapter: "echo", kind: "agent" });
    expect(seen[1]!.data).toMatchObject({ sessionId: id, stopReason: "end_turn" });
    for (const e of seen) expect(e.id).toMatch(new RegExp(`^${id}-${e.type.slice("session.".length)}-[0-9a-f]{16}$`));
    expect(rx.unverified).toHaveLength(0);
  });

  it("a sentinel on one session ends with that session (session.ended is terminal)", async () => {
    const { body: started } = await post("/sessions", { adapter: "echo", cwd: fx.home });
    const id = started.descriptor.id as string;
    const watching = await sentinel({ session: id }, { kind: "subject_terminal" });
    const { body: other } = await post("/sessions", { adapter: "echo", cwd: fx.home });
    await post(`/sessions/${other.descriptor.id}/stop`);
    await post(`/sessions/${id}/stop`);
    await until(() => (delivered(watching).length > 0 ? true : undefined), "session.ended delivered", 20_000);
    await until(
      async () => {
        const res = await fx.daemon.fetch(`/sentinels/${watching}`);
        const body = (await res.json()) as { status?: string };
        return res.status === 404 || (body.status && body.status !== "active") ? true : undefined;
      },
      "the sentinel to end",
      20_000,
    );
    const mine = delivered(watching);
    expect(mine.map((e) => e.type)).toEqual(["session.ended"]);
    expect(mine[0]!.subjects).toEqual([`session:${id}`]);
  });
});
