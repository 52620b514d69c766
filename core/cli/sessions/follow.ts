/**
 * `svc sessions follow <id> [--json] [--since <time>] [--after <seq>]`: a session's transcript so
 * far, then each entry as it is written, until the session ends (its end printed, exit 0) or
 * Ctrl-C. It reads `GET /sessions/:id/events?follow=1` (NDJSON; core/sessions/follow.ts), which
 * serves an ended session's whole transcript and ends. `--after` is the route's own `after` (the
 * entries after that seq); `--since` keeps the entries written at or after that time.
 */
import { SvcError } from "../../errors.js";
import type { TranscriptLine } from "../../sessions/transcript.js";
import { DaemonClient } from "../daemon-client.js";
import { parseTimeFlag } from "../duration.js";
import { SINCE_FLAG } from "../duration-flags.js";
import { dim, useColor, usageError } from "../output.js";
import { untilSignal } from "../until-signal.js";
import { TranscriptRenderer } from "./transcript-lines.js";

export interface FollowFlags {
  json?: boolean;
  since?: string;
  after?: string;
}

/** Each complete line of an NDJSON body, as it arrives. */
async function* ndjsonLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    const lines = buf.split("\n");
    buf = lines.pop() ?? "";
    for (const l of lines) if (l.trim()) yield l;
  }
  if (buf.trim()) yield buf;
}

export async function sessionsFollow(id: string, f: FollowFlags): Promise<void> {
  if (f.after !== undefined && !/^\d+$/.test(f.after.trim()))
    throw usageError(`--after ${JSON.stringify(f.after)} is not a transcript seq; give a whole number, e.g. 40`);
  const since = f.since === undefined ? undefined : parseTimeFlag(f.since, SINCE_FLAG, Date.now());
  const client = await DaemonClient.connect();
  const abort = new AbortController();
  const query = `follow=1${f.after !== undefined ? `&after=${Number(f.after)}` : ""}`;
  const res = await client.stream(`/sessions/${encodeURIComponent(id)}/events?${query}`, abort.signal);
  const renderer = new TranscriptRenderer({ color: useColor(process.stdout) });
  const write = (text: string) => text && process.stdout.write(text);
  let ended = false;
  let stopped = false;
  const show = (raw: string) => {
    let line: TranscriptLine;
    try {
      line = JSON.parse(raw) as TranscriptLine;
    } catch {
      return; // the route writes whole lines; nothing else comes
    }
    if (line.type === "session.ended") ended = true;
    if (since !== undefined && line.at < since) return;
    write(f.json ? raw + "\n" : renderer.push(line));
  };
  const reading = (async () => {
    for await (const raw of ndjsonLines(res.body)) show(raw);
  })();
  await untilSignal(async () => {
    stopped = true;
    abort.abort();
    await reading.catch(() => undefined);
  }, reading);
  try {
    await reading;
  } catch (err) {
    if (!stopped)
      throw new SvcError(
        "daemon_not_running",
        `the svc daemon (pid ${client.info.pid}) stopped sending session ${id}'s transcript: ${(err as Error).message}`,
      );
  } finally {
    if (!f.json) write(renderer.finish());
  }
  // The stream ended without an end entry: a session of an earlier daemon life that died with it, or `--after` past its end.
  if (!ended && !stopped && !f.json) process.stdout.write(dim(`(session ${id} is not running)`) + "\n");
}
