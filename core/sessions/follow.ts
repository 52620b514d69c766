import type { ServerResponse } from "node:http";
import type { SessionRuntime } from "./runtime.js";
import { readTranscript } from "./transcript-reader.js";
import type { TranscriptLine } from "./transcript.js";

/**
 * Streams a transcript as NDJSON: the lines on disk after `afterSeq`, then live lines as they are
 * written, until the session ends or the client goes away. Live lines are buffered while the
 * file is read and de-duplicated by `seq`, so nothing is lost or repeated at the seam.
 */
export async function followTranscript(
  runtime: SessionRuntime,
  id: string,
  which: "events" | "terminal",
  afterSeq: number,
  res: ServerResponse,
): Promise<void> {
  const s = runtime.get(id);
  const writer = which === "terminal" ? s.terminal : s.transcript;
  const path = which === "terminal" ? s.fixed.terminalPath! : s.fixed.eventsPath;
  res.writeHead(200, { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
  let last = afterSeq;
  const buffered: TranscriptLine[] = [];
  let replaying = true;
  const send = (line: TranscriptLine) => {
    if (line.seq <= last) return;
    last = line.seq;
    res.write(JSON.stringify(line) + "\n");
  };
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const unsubscribe = writer?.follow((line) => {
    if (replaying) buffered.push(line);
    else send(line);
    if (line.type === "session.ended" && which === "events") queueMicrotask(finish);
  });
  const onEnded = () => finish();
  res.on("close", onEnded);
  for (const line of await readTranscript(path, afterSeq)) send(line);
  replaying = false;
  for (const line of buffered.splice(0)) send(line);
  if (!s.live) finish();
  const poll = setInterval(() => {
    if (!s.live) finish();
  }, 250);
  await done;
  clearInterval(poll);
  unsubscribe?.();
  await writer?.flushed();
  if (!res.destroyed) for (const line of await readTranscript(path, last)) send(line);
  res.off("close", onEnded);
  if (!res.writableEnded) res.end();
}
