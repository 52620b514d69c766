/**
 * The judge's answer is untrusted input: an OpenAI chat completion whose first choice's message
 * content is a JSON object `{verdict, reason, suggestedPrompt?}`. Anything else (not JSON, another
 * shape, an unknown verdict, fields too long) is a short reason for a `judge_error`, never the
 * body itself (it may echo what was sent). Never throws.
 */
import { z } from "zod";

export const VERDICTS = ["on_track", "stuck", "needs_human", "done"] as const;
export type JudgeVerdict = (typeof VERDICTS)[number];

export const MAX_REASON = 2000;
export const MAX_SUGGESTED_PROMPT = 8000;

const completion = z.object({
  choices: z
    .array(z.object({ message: z.object({ content: z.string().nullish(), refusal: z.string().nullish() }) }))
    .min(1),
});

const verdictBody = z.object({
  verdict: z.enum(VERDICTS),
  reason: z.string().trim().min(1).max(MAX_REASON),
  suggestedPrompt: z.string().max(MAX_SUGGESTED_PROMPT).nullish(),
});

export type ParsedAnswer =
  | { ok: true; verdict: JudgeVerdict; reason: string; suggestedPrompt?: string }
  | { ok: false; reason: string };

/** Control characters (terminal escapes above all) become spaces; newlines and tabs stay. */
function printable(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, " ");
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A JSON object in `content`, also when wrapped in a ```json fence. */
function contentJson(content: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(content);
  return parseJson(fenced ? fenced[1]! : content);
}

export function parseJudgeAnswer(body: string): ParsedAnswer {
  try {
    const outer = parseJson(body);
    if (!outer.ok) return { ok: false, reason: "the judge's answer is not JSON" };
    const c = completion.safeParse(outer.value);
    if (!c.success) return { ok: false, reason: "the judge's answer is not a chat completion (no choices[0].message)" };
    const message = c.data.choices[0]!.message;
    if (typeof message.content !== "string" || message.content.trim() === "") {
      return {
        ok: false,
        reason: message.refusal ? "the judge refused to answer" : "the judge's answer has no message content",
      };
    }
    const inner = contentJson(message.content);
    if (!inner.ok) return { ok: false, reason: "the judge's message content is not JSON" };
    const v = verdictBody.safeParse(inner.value);
    if (!v.success) {
      const issue = v.error.issues[0];
      const field = issue?.path.join(".") || "content";
      return {
        ok: false,
        reason: `the judge's verdict is malformed at ${field}: ${field === "verdict" ? `must be one of ${VERDICTS.join(", ")}` : (issue?.message ?? "invalid")}`,
      };
    }
    const suggested = v.data.suggestedPrompt?.trim();
    return {
      ok: true,
      verdict: v.data.verdict,
      reason: printable(v.data.reason),
      ...(suggested ? { suggestedPrompt: printable(suggested) } : {}),
    };
  } catch {
    return { ok: false, reason: "the judge's answer could not be read" };
  }
}
