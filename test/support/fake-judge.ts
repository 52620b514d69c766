/**
 * A judge on loopback (plain HTTP, port 0) speaking OpenAI chat completions: `POST <url>/v1/chat/completions`
 * answers a verdict in `choices[0].message.content`. Records each request (the trigger and session
 * read from the user message); `mode` sets what the next requests meet: a verdict, junk, an
 * oversized body, no answer, a status, or a reset connection.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface JudgeRequest {
  path: string;
  authorization?: string;
  raw: string;
  body: any;
  trigger?: string;
  sessionId?: string;
}

export type JudgeMode =
  | { kind: "verdict"; verdict: string; reason?: string; suggestedPrompt?: string }
  | { kind: "junk" }
  | { kind: "oversized" }
  | { kind: "hang" }
  | { kind: "status"; status: number }
  | { kind: "reset" };

export interface FakeJudge {
  /** The base URL to give extJudge.baseUrl (ends in /v1). */
  baseUrl: string;
  requests: JudgeRequest[];
  /** The most requests of one session the judge had open at once. */
  maxOpen: Map<string, number>;
  mode: JudgeMode;
  close(): Promise<void>;
}

function completion(content: string): string {
  return JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "judge",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
}

export async function startFakeJudge(): Promise<FakeJudge> {
  const hanging = new Set<ServerResponse>();
  const open = new Map<string, number>();
  const judge: FakeJudge = {
    baseUrl: "",
    requests: [],
    maxOpen: new Map(),
    mode: { kind: "verdict", verdict: "on_track", reason: "working" },
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const user: string = body?.messages?.find((m: any) => m.role === "user")?.content ?? "";
      const trigger = /^Session \(trigger: ([^)]+)\):/.exec(user)?.[1];
      const sessionId = /"id": "(ses_[A-Za-z0-9]+)"/.exec(user)?.[1];
      judge.requests.push({
        path: req.url ?? "",
        authorization: req.headers.authorization,
        raw,
        body,
        trigger,
        sessionId,
      });
      const sid = sessionId ?? "?";
      open.set(sid, (open.get(sid) ?? 0) + 1);
      judge.maxOpen.set(sid, Math.max(judge.maxOpen.get(sid) ?? 0, open.get(sid)!));
      res.on("close", () => open.set(sid, open.get(sid)! - 1));
      const m = judge.mode;
      const json = (status: number, text: string) =>
        res.writeHead(status, { "content-type": "application/json" }).end(text);
      switch (m.kind) {
        case "verdict":
          return json(
            200,
            completion(
              JSON.stringify({
                verdict: m.verdict,
                reason: m.reason ?? "because",
                suggestedPrompt: m.suggestedPrompt ?? null,
              }),
            ),
          );
        case "junk":
          return json(200, "<html>certainly not a verdict</html>");
        case "oversized":
          return json(200, completion(JSON.stringify({ verdict: "on_track", reason: "x".repeat(200_000) })));
        case "hang":
          hanging.add(res);
          return;
        case "status":
          return json(
            m.status,
            JSON.stringify({ error: { message: `upstream says ${m.status}, echoing ${raw.slice(0, 50)}` } }),
          );
        case "reset":
          req.socket.destroy();
          return;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  judge.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  judge.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return judge;
}
