/**
 * Sessions of an earlier daemon life that never ended: the daemon was killed (-9) or crashed, so
 * their transcripts have no `session.ended` line and their processes may still run with no
 * owner. At start the daemon stops those processes (only when they are provably the ones it
 * started: see process-mark.ts) and closes the transcripts with a `session.ended` line whose
 * error is {@link DAEMON_EXITED}.
 */
import { createReadStream } from "node:fs";
import { readdir } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Logger } from "../runtime/logger.js";
import { openDurableAppend } from "../storage/durable-append.js";
import { withFileLock } from "../storage/lock.js";
import { linesBackwards } from "../storage/read-backwards.js";
import { isSessionId, sessionFiles } from "./events-dir.js";
import {
  daemonMayRun,
  groupRunning,
  isMarkedProcess,
  pidReused,
  readProcStatSync,
  type DaemonMark,
  type ProcessMark,
} from "./process-mark.js";
import { groupKiller, processKiller, STOP_GRACE_MS, terminateAndWait } from "./terminate.js";
import { readTranscriptTail } from "./transcript-reader.js";
import type { TranscriptLine } from "./transcript.js";

/** The `error` of the `session.ended` line written for a session whose daemon exited without ending it. */
export const DAEMON_EXITED = "daemon_exited";

/** Lines read from each transcript's end: `session.ended` may be followed by a turn's end and a few late updates. */
const TAIL_LINES = 8;
/** Bytes per step of that read: the last lines of an ended session are short. */
const TAIL_CHUNK = 4096;
/** Transcripts whose ends are read at once. */
const SCAN_BATCH = 16;
const POLL_MS = 50;
/** How long a killed process may take to disappear before it is counted as gone anyway (uninterruptible sleep). */
const KILL_WAIT_MS = 2000;

/**
 * The sweep's SIGTERM-to-SIGKILL grace from `SVC_ORPHAN_STOP_GRACE_MS` (a positive number of ms),
 * else undefined ({@link STOP_GRACE_MS}). For tests: a process that exits at SIGTERM is then not
 * sent a SIGKILL because a busy machine delayed the poll that sees it gone.
 */
export function orphanGraceMs(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env.SVC_ORPHAN_STOP_GRACE_MS);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export interface OrphanSweepOptions {
  eventsDir: string;
  /** Sessions the current runtime knows (started in this daemon life): never touched. */
  isKnown(sessionId: string): boolean;
  now(): number;
  /** SIGTERM to SIGKILL (default {@link STOP_GRACE_MS}). */
  graceMs?: number;
  /** Aborted when the daemon stops: no further transcript is read (the ones being ended finish). */
  signal?: AbortSignal;
  logger?: Logger;
}

export interface OrphanSweepResult {
  /** Transcripts that got a `session.ended` line. */
  ended: number;
  /** Of those, sessions whose process (group) was still running and was signalled. */
  terminated: number;
}

/** What the sweep needs from the `session.started` line (see SessionRuntime.start). */
export interface StartedData {
  pid?: number;
  process?: ProcessMark;
  daemon?: DaemonMark;
}

interface Orphan {
  id: string;
  path: string;
  started?: StartedData;
  lastSeq: number;
}

/**
 * Finds the transcripts under `eventsDir` of sessions this runtime does not know that have no
 * `session.ended` line and whose daemon no longer runs; stops their processes and appends
 * `session.ended` `{code: null, signal, error: "daemon_exited"}` (durably). Each transcript's
 * last lines decide; only the few without an end are read whole.
 */
export async function endOrphanedSessions(opts: OrphanSweepOptions): Promise<OrphanSweepResult> {
  const names = await readdir(opts.eventsDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  const ids = names.filter((id) => isSessionId(id) && !opts.isKnown(id));
  const orphans: Orphan[] = [];
  for (let i = 0; i < ids.length && !opts.signal?.aborted; i += SCAN_BATCH) {
    const found = await Promise.all(
      ids.slice(i, i + SCAN_BATCH).map((id) =>
        findOrphan(id, sessionFiles(opts.eventsDir, id).events).catch((err: Error) => {
          opts.logger?.warn("could not read the transcript of an earlier session", {
            sessionId: id,
            error: err.message,
          });
          return undefined;
        }),
      ),
    );
    for (const o of found) if (o && !opts.isKnown(o.id)) orphans.push(o);
  }
  const outcomes = await Promise.all(
    orphans.map(async (o) => {
      try {
        const signal = await stopOrphanProcess(o.started, opts.graceMs ?? STOP_GRACE_MS, (err) =>
          opts.logger?.warn("could not stop the process of an earlier session", {
            sessionId: o.id,
            pid: o.started?.pid,
            error: err.message,
          }),
        );
        if (!(await appendEnded(o, { code: null, signal, error: DAEMON_EXITED }, opts.now())))
          return { ended: 0, terminated: 0 };
        return { ended: 1, terminated: signal ? 1 : 0 };
      } catch (err) {
        opts.logger?.warn("could not end a session of an earlier daemon", {
          sessionId: o.id,
          error: (err as Error).message,
        });
        return { ended: 0, terminated: 0 };
      }
    }),
  );
  const result = outcomes.reduce((a, b) => ({ ended: a.ended + b.ended, terminated: a.terminated + b.terminated }), {
    ended: 0,
    terminated: 0,
  });
  if (result.ended > 0)
    opts.logger?.info("ended sessions left running by an earlier daemon", {
      count: result.ended,
      terminated: result.terminated,
    });
  return result;
}

/** The session when its transcript never ended and the daemon that started it is gone. */
async function findOrphan(id: string, path: string): Promise<Orphan | undefined> {
  const tail = await readTranscriptTail(path, TAIL_LINES, TAIL_CHUNK);
  if (tail.length === 0 || lastLifeEnded(tail)) return undefined;
  const scan = await scanTranscript(path);
  if (scan.ended) return undefined;
  if (scan.started?.daemon && (await daemonMayRun(scan.started.daemon))) return undefined;
  return { id, path, started: scan.started, lastSeq: scan.lastSeq };
}

/** What one pass over a transcript tells (see {@link scanTranscript}). */
export interface TranscriptScan {
  /** The `session.started` data of the session's latest life (since its last resume). */
  started?: StartedData;
  /** The latest life has a `session.ended` line. */
  ended: boolean;
  /** That line's time and data. */
  endedAt?: number;
  exit?: { code: number | null; signal: string | null; error?: string };
  lastSeq: number;
  /** Turns that ended (or failed), over every life. */
  turns: number;
}

const LIFE_LINES = ['"session.started"', '"session.ended"', '"session.starting"', '"session.resumed"'];

/**
 * One pass over the whole transcript: its `session.started` data, whether it ended, its last seq
 * and its turns. A session still starting has no `session.started` yet: its daemon mark is then the
 * one on `session.starting` (or `session.resumed`). A `session.resumed` line begins a new life: what
 * came before it no longer says whether the session runs.
 */
export async function scanTranscript(path: string): Promise<TranscriptScan> {
  let started: StartedData | undefined;
  let starting: DaemonMark | undefined;
  let ended: TranscriptLine | undefined;
  let lastSeq = 0;
  let turns = 0;
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const raw of lines) {
    // Torn lines count too: the new line's seq then repeats none on disk.
    const seq = /^\{"seq":(\d+),"at":\d+,"type":"([^"]*)"/.exec(raw) ?? /^\{"seq":(\d+),/.exec(raw);
    if (seq) lastSeq = Math.max(lastSeq, Number(seq[1]));
    if (seq?.[2] === "turn.ended" || seq?.[2] === "turn.failed") turns++;
    if (!LIFE_LINES.some((t) => raw.includes(t))) continue;
    let line: TranscriptLine;
    try {
      line = JSON.parse(raw) as TranscriptLine;
    } catch {
      continue; // torn
    }
    if (line.type === "session.ended") ended = line;
    else if (line.type === "session.started" && !started) started = startedData(line.data);
    else if (line.type === "session.starting" && !starting) starting = startedData(line.data).daemon;
    else if (line.type === "session.resumed") {
      ended = started = undefined;
      starting = startedData(line.data).daemon;
    }
  }
  if (starting && !started?.daemon) started = { ...started, daemon: starting };
  const exit = ended?.data as TranscriptScan["exit"] | undefined;
  return { started, ended: ended !== undefined, ...(ended ? { endedAt: ended.at, exit } : {}), lastSeq, turns };
}

function startedData(data: unknown): StartedData {
  const d = (data ?? {}) as Record<string, any>;
  const int = (v: unknown) => (Number.isInteger(v) && (v as number) > 0 ? (v as number) : undefined);
  const out: StartedData = {};
  if (int(d.pid)) out.pid = d.pid;
  const p = d.process;
  if (p && Number.isInteger(p.startTime) && typeof p.bootId === "string" && typeof p.group === "boolean")
    out.process = { startTime: p.startTime, bootId: p.bootId, group: p.group };
  if (d.daemon && int(d.daemon.pid)) {
    out.daemon = {
      pid: d.daemon.pid,
      ...(Number.isInteger(d.daemon.startTime) ? { startTime: d.daemon.startTime } : {}),
      ...(typeof d.daemon.bootId === "string" ? { bootId: d.daemon.bootId } : {}),
    };
  }
  return out;
}

/**
 * Stops the session's process (its whole group when it leads one) if it still runs and is the
 * one that was started: SIGTERM, SIGKILL after the grace. Returns the last signal sent, or null
 * when nothing was signalled (gone, not provably ours, or no /proc).
 */
async function stopOrphanProcess(
  started: StartedData | undefined,
  graceMs: number,
  onError: (err: Error) => void,
): Promise<NodeJS.Signals | null> {
  const pid = started?.pid;
  const mark = started?.process;
  if (!pid || !mark || !mayTarget(pid, mark.group) || !(await isMarkedProcess(pid, mark))) return null;
  const signalTarget = mark.group ? groupKiller(pid) : processKiller(pid);
  let sent: NodeJS.Signals | null = null;
  const kill = (signal: NodeJS.Signals) => {
    // Checked again right before each signal: the process may have exited since the last poll and
    // its pid gone to another process. (A group whose leader is gone keeps its id while members
    // remain, and the id cannot be reused before they are gone.)
    if (pidReused(pid, mark)) return;
    signalTarget(signal);
    sent = signal;
  };
  const running = mark.group ? () => groupRunning(pid) : () => isMarkedProcess(pid, mark);
  let settled = false;
  // Not our child: no exit event, so its exit is polled for.
  const exited = (async () => {
    let killedAt: number | undefined;
    while (!settled && (await running())) {
      if (sent === "SIGKILL" && Date.now() - (killedAt ??= Date.now()) > KILL_WAIT_MS) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  try {
    await terminateAndWait(kill, exited, graceMs);
  } catch (err) {
    onError(err as Error);
  } finally {
    settled = true;
  }
  return sent;
}

/**
 * False for a target no transcript line may name, whatever marks it carries (a transcript is a file
 * on disk: a tampered one can copy any process's start time and the boot id): pid 1 (as a group,
 * `kill(-1)` signals every process we may signal), this daemon, or the process group it is in.
 */
function mayTarget(pid: number, group: boolean): boolean {
  if (pid <= 1 || pid === process.pid) return false;
  return !group || readProcStatSync(process.pid)?.pgrp !== pid;
}

/**
 * Appends the `session.ended` line after a newline of its own when the last line was torn, and
 * makes it durable. Under a lock on the transcript, and only if it still has no end: another daemon
 * sharing eventsDir may be ending the same session at the same time. False when it had one.
 */
async function appendEnded(
  o: Orphan,
  data: { code: null; signal: string | null; error: string },
  at: number,
): Promise<boolean> {
  return withFileLock(o.path, async () => {
    if (lastLifeEnded(await readTranscriptTail(o.path, TAIL_LINES, TAIL_CHUNK))) return false;
    const line: TranscriptLine = { seq: o.lastSeq + 1, at, type: "session.ended", data };
    const prefix = (await endsWithNewline(o.path)) ? "" : "\n";
    const file = await openDurableAppend(o.path);
    try {
      await file.handle.appendFile(prefix + JSON.stringify(line) + "\n", "utf8");
      await file.sync();
    } finally {
      await file.handle.close();
    }
    return true;
  });
}

/** True when `tail` has a `session.ended` line after its last `session.resumed` (a resumed session ended before and lives again). */
function lastLifeEnded(tail: TranscriptLine[]): boolean {
  for (let i = tail.length - 1; i >= 0; i--) {
    if (tail[i]!.type === "session.ended") return true;
    if (tail[i]!.type === "session.resumed") return false;
  }
  return false;
}

/** True when the file ends with a newline (or is empty): nothing follows its last one. */
export async function endsWithNewline(path: string): Promise<boolean> {
  for await (const last of linesBackwards(path, TAIL_CHUNK)) return last.bytes.length === 0;
  return true;
}
