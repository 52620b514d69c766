import { messagingPolicy, resolvePromptInterrupt } from "../config/spawn-defaults.js";
import type { ConfigService } from "../config/config-service.js";
import { SvcError } from "../errors.js";
import type { PromptReceipt, PromptSender, PromptUrgency } from "../plugin-api/sessions.js";
import type { SessionRuntime } from "./runtime.js";

export interface MessageReceipt extends PromptReceipt {
  messageId: string;
  from?: string;
  to: string;
}

/**
 * Prompts and messages between senders and sessions, under SPEC.md's messaging rules: humans
 * (HTTP, CLI, a tool call without a sender session) keep interrupt; a session sender's interrupt
 * is delivered as steer unless `defaults.messaging.agentInterrupt` is `allow`; `message_send` and
 * `message_reply` reach a sibling only with `allowSiblings`.
 */
export class SessionMessaging {
  private readonly messages = new Map<string, { from?: string; to: string }>();

  constructor(
    private readonly runtime: SessionRuntime,
    private readonly config: ConfigService,
  ) {}

  private cfg() {
    return this.config.current().effective;
  }

  /** `agent_prompt`, `svc sessions prompt`, `POST /sessions/:id/prompt`. */
  prompt(to: string, text: string, opts: { from?: string; interrupt?: boolean }): MessageReceipt {
    const sender = this.sender(opts.from);
    const urgency: PromptUrgency = resolvePromptInterrupt(this.cfg(), opts.interrupt) ? "interrupt" : "queue";
    return this.send(sender, to, text, urgency);
  }

  /** `message_send`: to a child, the parent, or (with allowSiblings) a sibling. */
  messageSend(from: string | undefined, to: string, text: string, urgency: PromptUrgency = "queue"): MessageReceipt {
    if (from) this.checkReach(from, to, "message_send");
    return this.send(this.sender(from), to, text, urgency);
  }

  /** `message_reply`: answers the sender of a message this session received. */
  messageReply(from: string, messageId: string, text: string, urgency: PromptUrgency = "queue"): MessageReceipt {
    const original = this.messages.get(messageId);
    if (!original) throw new SvcError("not_found", `no message ${messageId} known to this daemon`);
    if (original.to !== from) throw new SvcError("forbidden", `message ${messageId} was not sent to session ${from}`);
    if (!original.from)
      throw new SvcError(
        "invalid_input",
        `message ${messageId} came from a person or a sentinel, not a session; there is no session to reply to`,
      );
    this.checkReach(from, original.from, "message_reply");
    return this.send(this.sender(from), original.from, text, urgency);
  }

  /** `message_parent`: interrupt is only requested; `agentInterrupt` decides. */
  messageParent(from: string, text: string, interrupt?: boolean): MessageReceipt {
    const parentId = this.runtime.get(from).fixed.parentId;
    if (!parentId) throw new SvcError("not_found", `session ${from} has no parent session`);
    const urgency: PromptUrgency = resolvePromptInterrupt(this.cfg(), interrupt) ? "interrupt" : "queue";
    return this.send(this.sender(from), parentId, text, urgency);
  }

  private sender(from: string | undefined): PromptSender {
    if (!from) return { kind: "human" };
    this.runtime.get(from);
    return { kind: "session", id: from };
  }

  private checkReach(from: string, to: string, verb: string): void {
    const rel = this.runtime.relation(from, to);
    if (rel === "self") throw new SvcError("invalid_input", `${verb}: a session cannot message itself`);
    if (rel === "sibling" && !messagingPolicy(this.cfg()).allowSiblings) {
      throw new SvcError(
        "forbidden",
        `${verb}: session ${to} is a sibling of ${from}; sibling messaging is off (set defaults.messaging.allowSiblings to true)`,
      );
    }
    if (rel === "unrelated")
      throw new SvcError("forbidden", `${verb}: session ${to} is neither the parent, a child nor a sibling of ${from}`);
  }

  private send(sender: PromptSender, to: string, text: string, urgency: PromptUrgency): MessageReceipt {
    const applied = this.runtime.applyInterruptPolicy(sender, urgency);
    const receipt = this.runtime.prompt(to, text, applied);
    this.messages.set(receipt.promptId, { from: sender.kind === "session" ? sender.id : undefined, to });
    if (this.messages.size > 5000) this.messages.delete(this.messages.keys().next().value!);
    return { ...receipt, messageId: receipt.promptId, ...(sender.id ? { from: sender.id } : {}), to };
  }
}
