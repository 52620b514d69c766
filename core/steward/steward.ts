/**
 * The session steward (docs/steward.md): at the moments a person would want one (a stall, a turn's
 * end, a handoff suggestion, a context threshold, or on request) it asks the judge for a verdict on
 * a session, keeps it on the session (runtime.recordVerdict: descriptor, verdict.json,
 * `session:verdict`), and tells a child's parent when the child is stuck or needs a person. It only
 * judges and tells: it never prompts, stops or kills a session on its own.
 */
import type { ConfigService } from "../config/config-service.js";
import type { StampedEvent } from "../daemon/event-bus.js";
import { SvcError } from "../errors.js";
import type { RedactionService } from "../redaction/redaction.js";
import { judgeRedactorSlug } from "../redaction/slug.js";
import type { Logger } from "../runtime/logger.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import { readTranscriptTail } from "../sessions/transcript-reader.js";
import type { SessionDescriptor, SessionVerdict } from "../sessions/types.js";
import { parseJudgeAnswer } from "./answer.js";
import { JudgeBudget } from "./budget.js";
import { postJudge } from "./judge-call.js";
import { judgeSettings, type JudgeSettings } from "./judge-config.js";
import { buildJudgeRequest } from "./judge-request.js";
import { ON_REQUEST, TRIGGERS } from "./triggers.js";

/** How many transcript lines are read (a run of agent text chunks is one entry of the request). */
const TAIL_LINES = 200;

const NO_KEY_MESSAGE =
  "the session steward has no judge key (extJudge.apiKey, or EXT_JUDGE_API_KEY in the daemon's environment): no session is judged";

/** Where a judge request goes: the judge itself, or the llm-endpoint sidecar with the steward's own token. */
export interface JudgeChannel {
  url: string;
  bearer: string;
  /** The model name sent (the sidecar resolves it to the judge's route and model). */
  model: string;
  viaSidecar: boolean;
}

export interface StewardDeps {
  config: ConfigService;
  sessions: SessionRuntime;
  logger: Logger;
  now(): number;
  /** The daemon's redaction service (core/redaction). */
  redaction: RedactionService;
  /** The sidecar's channel while features.llmEndpoint is on and it runs; undefined: call the judge directly. */
  sidecar(): Promise<JudgeChannel | undefined>;
}

export class Steward {
  private readonly budget = new JudgeBudget();
  private readonly inFlight = new Map<string, Promise<SessionVerdict>>();
  private readonly closing = new AbortController();

  constructor(private readonly d: StewardDeps) {}

  private settings(): JudgeSettings {
    return judgeSettings(this.d.config.current());
  }

  /** A daemon event: judged when it is a trigger, the session an agent session, a key set, the budget allows and no judgement of it is in flight. */
  onEvent(e: StampedEvent): void {
    const trigger = TRIGGERS[e.type];
    const sessionId = (e.data as { sessionId?: unknown } | undefined)?.sessionId;
    if (!trigger || typeof sessionId !== "string") return;
    const settings = this.settings();
    if (!settings.key) return;
    if (this.d.sessions.state(sessionId) === "unknown" || this.d.sessions.get(sessionId).fixed.kind !== "agent") return;
    if (this.inFlight.has(sessionId)) return;
    if (!this.budget.take(sessionId, trigger, this.d.now(), settings.windowMs)) return;
    this.start(sessionId, trigger, settings).catch(() => undefined);
  }

  /**
   * `svc sessions judge`, `POST /sessions/:id/judge`, `session_judge`: not budget-limited. Still one
   * judgement per session at a time: it waits for the one in flight, if any, then asks.
   */
  async request(sessionId: string): Promise<{ verdict: SessionVerdict; descriptor: SessionDescriptor }> {
    const settings = this.settings();
    if (!settings.key)
      throw new SvcError(
        "unavailable",
        `${NO_KEY_MESSAGE}: set extJudge.apiKey (svc config set extJudge.apiKey, from stdin) or EXT_JUDGE_API_KEY`,
      );
    const s = this.d.sessions.get(sessionId);
    if (s.fixed.kind !== "agent")
      throw new SvcError(
        "invalid_input",
        `session ${sessionId} is a terminal session; the steward judges agent sessions`,
      );
    for (let p = this.inFlight.get(sessionId); p; p = this.inFlight.get(sessionId)) await p.catch(() => undefined);
    const verdict = await this.start(sessionId, ON_REQUEST, settings);
    return { verdict, descriptor: this.d.sessions.describe(this.d.sessions.get(sessionId)) };
  }

  /** The daemon stops: requests in flight are cut (and recorded as judge_error); waits for them to settle. */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private start(sessionId: string, trigger: string, settings: JudgeSettings): Promise<SessionVerdict> {
    const p = this.judge(sessionId, trigger, settings).finally(() => this.inFlight.delete(sessionId));
    this.inFlight.set(sessionId, p);
    return p;
  }

  /** Asks, records, tells. Never rejects for the judge's sake: a failure is a `judge_error` verdict. */
  private async judge(sessionId: string, trigger: string, settings: JudgeSettings): Promise<SessionVerdict> {
    const rt = this.d.sessions;
    const s = rt.get(sessionId);
    const model = settings.model;
    let outcome: { verdict: SessionVerdict["verdict"]; reason: string; suggestedPrompt?: string };
    try {
      await s.transcript.flushed();
      const lines = await readTranscriptTail(s.fixed.eventsPath, TAIL_LINES);
      const redaction = await this.d.redaction.forSlug(judgeRedactorSlug(this.d.config.current().effective));
      const channel = (await this.d.sidecar()) ?? {
        url: settings.url,
        bearer: settings.key!.value,
        model: settings.model,
        viaSidecar: false,
      };
      const { body } = buildJudgeRequest(
        { session: rt.describe(s), trigger, now: this.d.now(), lines },
        channel.model,
        redaction,
      );
      const answer = await postJudge({
        url: channel.url,
        bearer: channel.bearer,
        body,
        timeoutMs: settings.timeoutMs,
        ownErrors: channel.viaSidecar,
        signal: this.closing.signal,
      });
      const parsed = answer.ok ? parseJudgeAnswer(answer.text) : answer;
      outcome = parsed.ok
        ? {
            verdict: parsed.verdict,
            reason: parsed.reason,
            ...(parsed.suggestedPrompt ? { suggestedPrompt: parsed.suggestedPrompt } : {}),
          }
        : { verdict: "judge_error", reason: parsed.reason };
    } catch (err) {
      outcome = { verdict: "judge_error", reason: `the judge request could not be made: ${(err as Error).message}` };
    }
    const verdict: SessionVerdict = { ...outcome, trigger, at: this.d.now(), model };
    if (verdict.verdict === "judge_error")
      this.d.logger.warn("steward: no verdict from the judge", { sessionId, trigger, reason: verdict.reason });
    await rt
      .recordVerdict(sessionId, verdict)
      .catch((err: Error) =>
        this.d.logger.error("steward: the verdict was not recorded", { sessionId, error: err.message }),
      );
    this.tellParent(sessionId, verdict);
    return verdict;
  }

  /** A child that is stuck or needs a person: its parent is told, queued behind its turn (never an interrupt). */
  private tellParent(sessionId: string, v: SessionVerdict): void {
    if (v.verdict !== "stuck" && v.verdict !== "needs_human") return;
    const rt = this.d.sessions;
    if (rt.state(sessionId) === "unknown") return;
    const parentId = rt.get(sessionId).fixed.parentId;
    if (!parentId || rt.state(parentId) !== "live" || rt.get(parentId).fixed.kind !== "agent") return;
    const what = v.verdict === "stuck" ? "is stuck" : "needs a person";
    const text =
      `[svc steward] your child session ${sessionId} ${what}: ${v.reason}` +
      (v.suggestedPrompt ? `\nSuggested next prompt for it: ${v.suggestedPrompt}` : "") +
      `\n(The steward only reports; nothing was sent to ${sessionId}.)`;
    try {
      rt.prompt(parentId, text, { sender: { kind: "system", id: "steward" }, urgency: "queue" });
    } catch (err) {
      this.d.logger.warn("steward: the parent was not told", { sessionId, parentId, error: (err as Error).message });
    }
  }
}
