/**
 * Resuming a session that ended, or whose daemon died (docs/sessions.md "Resume"): from its record
 * (session-record.ts) and its transcript's end, the session runs again under its id, its lineage
 * and options kept, its transcript going on, and its agent loading its own conversation (the
 * adapter's optional `resume`; for ACP, `session/load`). Everything that makes a session not
 * resumable is said here, with why and what to do.
 */
import { open, stat } from "node:fs/promises";
import { SvcError } from "../errors.js";
import type { Logger } from "../runtime/logger.js";
import { resolveAdapter, type AdapterLookup } from "./adapter-lookup.js";
import { isSessionId, sessionFiles } from "./events-dir.js";
import { LiveSession } from "./live-session.js";
import { endsWithNewline, scanTranscript, type TranscriptScan } from "./orphans.js";
import { daemonMayRun } from "./process-mark.js";
import type { SessionRuntime } from "./runtime.js";
import { readVerdict } from "./verdict-file.js";
import { fixedOf, readSessionRecord, type SessionRecord } from "./session-record.js";
import { TranscriptWriter } from "./transcript.js";
import type { SessionDescriptor } from "./types.js";

export interface ResumeDeps {
  runtime: SessionRuntime;
  adapters: AdapterLookup;
  /** Settles when the sweep of an earlier daemon life's sessions has ended them (orphans.ts). */
  earlierLives(): Promise<unknown>;
  logger: Logger;
}

export class SessionResumer {
  private readonly resuming = new Set<string>();

  constructor(private readonly deps: ResumeDeps) {}

  /**
   * Resumes session `id`. `allowed` runs once the record is read (the caller's confinement of the
   * session's cwd). Errors: `not_found` (no record and no transcript), `conflict` (live, or being
   * resumed), `not_resumable` (why, and how to allow it when that is possible).
   */
  async resume(id: string, allowed?: (record: SessionRecord) => Promise<void>): Promise<SessionDescriptor> {
    const { runtime } = this.deps;
    if (!isSessionId(id)) throw new SvcError("invalid_input", `invalid session id ${JSON.stringify(id)}`);
    this.refuseLive(id);
    if (this.resuming.has(id)) throw new SvcError("conflict", `session ${id} is being resumed already`);
    this.resuming.add(id);
    try {
      const record = await this.record(id);
      await allowed?.(record);
      if (record.kind !== "agent")
        throw new SvcError("not_resumable", `session ${id} is a terminal session: only agent sessions can be resumed`);
      // The earlier life's processes are stopped and transcripts ended first: never two agents on one session.
      await this.deps.earlierLives();
      await (runtime.state(id) === "ended" ? runtime.get(id).closing : undefined);
      this.refuseLive(id);
      const { events } = sessionFiles(runtime.eventsDir, id);
      const scan = await scanTranscript(events).catch((err: NodeJS.ErrnoException): TranscriptScan => {
        if (err.code === "ENOENT") return { ended: true, lastSeq: 0, turns: 0 };
        throw err;
      });
      if (!scan.ended) await this.refuseUnended(id, scan);
      const { instance, source } = await resolveAdapter(this.deps.adapters, record.adapter);
      if (!instance.resume) {
        throw new SvcError(
          "not_resumable",
          `session ${id}: its adapter "${record.adapter}" (${source === "package" ? `the @svc/adapter-${record.adapter} package` : source}) has no resume support`,
        );
      }
      const why = instance.notResumable?.(record.adapter);
      if (why) throw new SvcError("not_resumable", `session ${id} cannot be resumed: ${why}`);
      if (!record.agentSessionId)
        throw new SvcError(
          "not_resumable",
          `session ${id}: its agent gave no session id when it started, so there is no conversation to load`,
        );
      if (!(await stat(record.cwd).catch(() => undefined))?.isDirectory()) {
        throw new SvcError(
          "not_resumable",
          `session ${id}: its working directory ${record.cwd} no longer exists${record.worktree ? " (its worktree was removed)" : ""}`,
        );
      }
      if (!(await endsWithNewline(events))) await appendNewline(events);
      return await runtime.relaunch(record, scan, instance, source);
    } finally {
      this.resuming.delete(id);
    }
  }

  /**
   * The descriptor of a session this daemon life does not know, from its record and transcript
   * (`sessions show` after a restart); `not_found` without a record.
   */
  async describeRecorded(id: string): Promise<SessionDescriptor> {
    const { runtime } = this.deps;
    if (!isSessionId(id)) throw new SvcError("invalid_input", `invalid session id ${JSON.stringify(id)}`);
    const record = await this.record(id);
    const { events } = sessionFiles(runtime.eventsDir, id);
    const scan = await scanTranscript(events).catch(() => undefined);
    const noop = () => undefined;
    const ghost = new LiveSession(fixedOf(record, events), new TranscriptWriter(events, Date.now), undefined, {
      now: Date.now,
      onTurnEnded: noop,
      onExited: noop,
      onQuota: noop,
      onUsage: noop,
    });
    ghost.turns = scan?.turns ?? 0;
    ghost.resumes = record.resumes ?? 0;
    if (record.continuedFrom) ghost.continuedFrom = record.continuedFrom;
    ghost.verdict = await readVerdict(runtime.eventsDir, id);
    ghost.lastActivityAt = scan?.endedAt ?? record.createdAt;
    ghost.state = "ended";
    ghost.endedAt = scan?.endedAt;
    ghost.exit = scan?.exit ?? {
      code: null,
      signal: null,
      error: "no end in its transcript: its daemon may still run it",
    };
    return runtime.describe(ghost);
  }

  private refuseLive(id: string): void {
    const { runtime } = this.deps;
    if (runtime.state(id) !== "live") return;
    const s = runtime.get(id);
    throw new SvcError(
      "conflict",
      `session ${id} is live (${s.state}): prompt it as it is; only an ended session can be resumed`,
    );
  }

  private async record(id: string): Promise<SessionRecord> {
    const read = await readSessionRecord(this.deps.runtime.eventsDir, id);
    if (read.state === "ok") return read.record;
    if (read.state === "damaged") {
      this.deps.logger.error("a session record is damaged", { sessionId: id, path: read.path, reason: read.reason });
      throw new SvcError(
        "not_resumable",
        `session ${id}: its record ${read.path} is damaged (${read.reason}); it was left as it is`,
      );
    }
    const { events } = sessionFiles(this.deps.runtime.eventsDir, id);
    if (await stat(events).catch(() => undefined)) {
      throw new SvcError(
        "not_resumable",
        `session ${id} has a transcript but no record (session.json): it was started by an svc without resume, or its agent never started`,
      );
    }
    throw new SvcError("not_found", `no session ${id}: no record or transcript under ${this.deps.runtime.eventsDir}`);
  }

  /** A transcript without an end after the sweep: its daemon (another one sharing eventsDir) still runs it. */
  private async refuseUnended(id: string, scan: TranscriptScan): Promise<never> {
    const daemon = scan.started?.daemon;
    if (daemon && (await daemonMayRun(daemon)))
      throw new SvcError(
        "conflict",
        `session ${id} is live in another daemon (pid ${daemon.pid}) sharing ${this.deps.runtime.eventsDir}`,
      );
    throw new SvcError(
      "conflict",
      `session ${id} has no end in its transcript and the sweep of the earlier daemon's sessions did not end it; see the daemon log, then try again`,
    );
  }
}

async function appendNewline(path: string): Promise<void> {
  const fh = await open(path, "a");
  try {
    await fh.appendFile("\n");
    await fh.sync();
  } finally {
    await fh.close();
  }
}
