import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DaemonEventBus } from "../../../core/daemon/event-bus.js";
import { eventsRoute, formatSseEvent } from "../../../core/daemon/events-module.js";
import { redactLikelySecrets } from "../../../core/daemon/mcp/redact.js";
import type { RouteRequest } from "../../../core/plugin-api/http.js";

/** A response double: records what is written, emits "close" when the client goes away. */
class FakeRes extends EventEmitter {
  chunks: string[] = [];
  status = 0;
  writableLength = 0;
  destroyed = false;
  writeHead(status: number) {
    this.status = status;
    return this;
  }
  write(chunk: string | Buffer) {
    this.chunks.push(chunk.toString());
    return true;
  }
  end() {
    this.emit("close");
  }
  destroy() {
    this.destroyed = true;
    this.emit("close");
  }
  get text() {
    return this.chunks.join("");
  }
}

function request(res: FakeRes, headers: Record<string, string> = {}): RouteRequest {
  return { headers, query: new URLSearchParams(), res: res as unknown as ServerResponse } as unknown as RouteRequest;
}

class CountingBus extends DaemonEventBus {
  live = 0;
  override subscribe(listener: Parameters<DaemonEventBus["subscribe"]>[0]) {
    this.live++;
    const off = super.subscribe(listener);
    return () => {
      this.live--;
      return off();
    };
  }
}

afterEach(() => vi.useRealTimers());

describe("events route", () => {
  it("writes keep-alive comments on the interval and stops them, and the subscription, on disconnect", () => {
    vi.useFakeTimers();
    const bus = new CountingBus();
    const streams = new Set<ServerResponse>();
    const route = eventsRoute(bus, streams, { keepAliveMs: 1000 });
    const res = new FakeRes();
    expect(route.handler(request(res))).toBeUndefined();
    expect(res.status).toBe(200);
    expect(bus.live).toBe(1);
    expect(streams.size).toBe(1);
    vi.advanceTimersByTime(3000);
    expect(res.text.match(/: keep-alive\n\n/g)).toHaveLength(3);
    res.emit("close");
    expect(bus.live).toBe(0);
    expect(streams.size).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(res.text.match(/: keep-alive\n\n/g)).toHaveLength(3);
    bus.emit("after-close");
    expect(res.text).not.toContain("after-close");
  });

  it("announces a gap when the backlog no longer holds the events after Last-Event-ID", () => {
    const bus = new DaemonEventBus(3);
    for (let i = 0; i < 10; i++) bus.emit("e", { i });
    const res = new FakeRes();
    eventsRoute(bus, new Set()).handler(request(res, { "last-event-id": "2" }));
    expect(res.text).toContain(`event: events:gap\ndata: {"after":2,"reason":"backlog_overflow","resumedFrom":8}`);
    expect([...res.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([8, 9, 10]);
    res.emit("close");
  });

  it("disconnects a client that stops reading once its buffer is over the cap", () => {
    const bus = new DaemonEventBus();
    const res = new FakeRes();
    eventsRoute(bus, new Set(), { maxBufferedBytes: 10 }).handler(request(res));
    res.writableLength = 11;
    bus.emit("big", { x: "y" });
    expect(res.destroyed).toBe(true);
  });

  it("formats an event once for all its subscribers, each still getting every event", () => {
    const bus = new DaemonEventBus();
    const clients = Array.from({ length: 3 }, () => new FakeRes());
    for (const res of clients) eventsRoute(bus, new Set()).handler(request(res));
    let reads = 0;
    const data = {
      get sentinelId() {
        reads++;
        return "snt_1";
      },
    };
    bus.emit("sentinel:matched", data);
    bus.emit("sentinel:matched", data);
    expect(reads).toBe(2);
    for (const res of clients) {
      expect([...res.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([1, 2]);
      expect(res.text).toContain(`"data":{"sentinelId":"snt_1"}`);
      res.emit("close");
    }
  });

  it("never writes secrets: secret-looking keys and whsec_ values are redacted", () => {
    const out = formatSseEvent({
      seq: 1,
      at: 0,
      type: "x",
      data: {
        secret: "s3cr3t",
        nested: { authToken: "t0k", apiKey: "k", list: ["whsec_abc"] },
        inputTokens: 12,
        subject: "github:a/b",
      },
    });
    expect(out).not.toMatch(/s3cr3t|t0k|"k"|whsec_abc/);
    expect(out).toContain(`"inputTokens":12`);
    expect(out).toContain(`"subject":"github:a/b"`);
    expect(redactLikelySecrets({ password: "p", ok: 1 })).toEqual({ password: "[redacted]", ok: 1 });
    expect(
      redactLikelySecrets({ github_token: "abc", "X-Api-Token": "def", inputTokens: 12, tokenizer: "bpe" }),
    ).toEqual({
      github_token: "[redacted]",
      "X-Api-Token": "[redacted]",
      inputTokens: 12,
      tokenizer: "bpe",
    });
  });
});
