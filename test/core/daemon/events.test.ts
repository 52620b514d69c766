import { describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, useDaemonProcess } from "../../support/cli.js";

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
}

/** A minimal SSE reader over fetch: yields parsed messages and comments as they arrive. */
async function openStream(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const waiters: Array<() => void> = [];
  let buffer = "";
  const pump = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let idx: number;
        while ((idx = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, idx);
          buffer = buffer.slice(idx + 2);
          const msg: SseMessage = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.startsWith("id: ")) msg.id = line.slice(4);
            else if (line.startsWith("event: ")) msg.event = line.slice(7);
            else if (line.startsWith("data: ")) msg.data = line.slice(6);
          }
          if (msg.event || msg.data) messages.push(msg);
          waiters.splice(0).forEach((w) => w());
        }
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    res,
    messages,
    comments,
    async waitFor(pred: (m: SseMessage[]) => boolean, ms = 60_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!pred(messages)) {
        if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(messages)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}

const ticks = (m: SseMessage[]) => m.filter((x) => x.event === "heartbeat:tick");

describe("/events against a real daemon process", () => {
  const STABLE = "events-stable-token-0123456789abcdef";
  const fx = useDaemonProcess({ args: ["--auth-token", STABLE] });

  const tick = async () => {
    const res = await fx.daemon.fetch("/heartbeat/tick", { method: "POST", auth: false });
    expect(res.status).toBe(200);
  };

  it("streams daemon events with seq as the SSE id, and resumes with Last-Event-ID with only the missed ones", async () => {
    const first = await openStream(`${fx.daemon.baseUrl}/events`);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await tick();
    await tick();
    await first.waitFor((m) => ticks(m).length === 2);
    const seen = ticks(first.messages);
    const lastId = seen[1]!.id!;
    expect(Number(seen[1]!.id)).toBe(Number(seen[0]!.id) + 1);
    const payload = JSON.parse(seen[0]!.data!);
    expect(payload).toMatchObject({ seq: Number(seen[0]!.id), type: "heartbeat:tick" });
    expect(typeof payload.at).toBe("number");
    await first.close();

    await tick();
    await tick();
    await tick();
    const resumed = await openStream(`${fx.daemon.baseUrl}/events`, { "last-event-id": lastId });
    await resumed.waitFor((m) => ticks(m).length === 3);
    const ids = ticks(resumed.messages).map((m) => Number(m.id));
    expect(ids).toEqual([Number(lastId) + 1, Number(lastId) + 2, Number(lastId) + 3]);
    expect(resumed.messages.some((m) => m.event === "events:gap")).toBe(false);
    await tick();
    await resumed.waitFor((m) => ticks(m).length === 4);
    expect(ticks(resumed.messages).map((m) => Number(m.id))).toEqual([...ids, Number(lastId) + 4]);
    await resumed.close();
  });

  it("without Last-Event-ID only live events arrive; ?lastEventId= also resumes", async () => {
    const live = await openStream(`${fx.daemon.baseUrl}/events`);
    await new Promise((r) => setTimeout(r, 50));
    expect(ticks(live.messages)).toHaveLength(0);
    await tick();
    await live.waitFor((m) => ticks(m).length === 1);
    const id = Number(ticks(live.messages)[0]!.id);
    await live.close();
    const q = await openStream(`${fx.daemon.baseUrl}/events?lastEventId=${id - 1}`);
    await q.waitFor((m) => ticks(m).length === 1);
    expect(Number(ticks(q.messages)[0]!.id)).toBe(id);
    await q.close();
  });

  it("an id from an earlier daemon life (beyond the newest seq) replays the backlog after an events:gap notice", async () => {
    const s = await openStream(`${fx.daemon.baseUrl}/events`, { "last-event-id": "999999" });
    await s.waitFor((m) => m.some((x) => x.event === "events:gap") && ticks(m).length > 0);
    const gap = s.messages.find((x) => x.event === "events:gap")!;
    expect(JSON.parse(gap.data!)).toMatchObject({ after: 999999, reason: "daemon_restarted" });
    expect(Number(ticks(s.messages)[0]!.id)).toBe(1);
    await s.close();
  });

  it("refuses a malformed Last-Event-ID with 400", async () => {
    const res = await fetch(`${fx.daemon.baseUrl}/events`, { headers: { "last-event-id": "abc" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_input");
  });

  it("auth: non-loopback callers need the token (wrong refused, right accepted)", async () => {
    const xff = { "x-forwarded-for": "198.51.100.9" };
    expect((await fetch(`${fx.daemon.baseUrl}/events`, { headers: xff })).status).toBe(401);
    expect(
      (await fetch(`${fx.daemon.baseUrl}/events`, { headers: { ...xff, authorization: "Bearer nope" } })).status,
    ).toBe(401);
    const ok = await openStream(`${fx.daemon.baseUrl}/events`, { ...xff, authorization: `Bearer ${STABLE}` });
    expect(ok.res.status).toBe(200);
    await ok.close();
  });

  it("a stream still open at daemon stop does not keep the daemon from stopping cleanly", async () => {
    const h = await makeTempHome();
    const d = await startDaemonProcess({ home: h.home });
    const s = await openStream(`${d.baseUrl}/events`);
    expect(await d.stop()).toBe(0);
    await s.close();
    await h.cleanup();
  });
});
