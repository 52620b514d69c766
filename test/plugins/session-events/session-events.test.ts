/** The session lifecycle vocabulary (issue 27): daemon session events as sentinel events, and `session.lifecycle`'s arguments. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isValidEventId } from "../../../core/plugin-api/limits.js";
import { SentinelIndex } from "../../../core/sentinels/matcher.js";
import { sentinelSpecSchema } from "../../../core/sentinels/spec-schema.js";
import { sessionLifecycleEventType as t } from "../../../plugins/session-events/event-type.js";
import { SESSION_EVENT_TYPES, toSessionEvent } from "../../../plugins/session-events/session-event.js";
import { undeclaredKeys, undescribedProperties } from "../../support/json-schema.js";

const sessionId = fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/);
const what = fc.constantFrom(...SESSION_EVENT_TYPES.map((x) => x.slice("session.".length)));
const heard = (type: string, data: unknown, at = 1_780_000_000_000, seq = 1) => ({ seq, at, type, data });

describe("session events as sentinel events", () => {
  it("session:<what> becomes session.<what> on subject session:<id>, with a valid id stable for the same event (property)", () => {
    fc.assert(
      fc.property(
        sessionId,
        what,
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.integer({ min: 1, max: 10 ** 6 }),
        (id, w, at, seq) => {
          const e = toSessionEvent(heard(`session:${w}`, { sessionId: id, promptId: "prm_1" }, at, seq))!;
          expect(e).toMatchObject({
            type: `session.${w}`,
            subjects: [`session:${id}`],
            time: new Date(at).toISOString(),
            data: { sessionId: id, promptId: "prm_1" },
          });
          expect(isValidEventId(e.id)).toBe(true);
          expect(e.id.startsWith(`${id}-${w}-`)).toBe(true);
          // The bus's seq restarts with the daemon: the id does not depend on it.
          expect(toSessionEvent(heard(`session:${w}`, { sessionId: id, promptId: "prm_1" }, at, seq + 1))!.id).toBe(
            e.id,
          );
          expect(toSessionEvent(heard(`session:${w}`, { sessionId: id, promptId: "prm_2" }, at, seq))!.id).not.toBe(
            e.id,
          );
          expect(toSessionEvent(heard(`session:${w}`, { sessionId: id, promptId: "prm_1" }, at + 1, seq))!.id).not.toBe(
            e.id,
          );
        },
      ),
    );
  });

  it.each([
    ["sentinel:matched", { sessionId: "a" }],
    ["session:started", {}],
    ["session:started", { sessionId: "has space" }],
    ["session:Bad.Type", { sessionId: "a" }],
    ["session:started", undefined],
  ])("leaves out %s %j", (type, data) => {
    expect(toSessionEvent(heard(type, data))).toBeUndefined();
  });

  it("describes every field the daemon's session events carry", () => {
    expect(undescribedProperties(t.payloadSchema)).toEqual([]);
    expect(undescribedProperties(t.inputSchema)).toEqual([]);
    const samples = [
      { sessionId: "s", adapter: "echo", source: "catalog", kind: "agent" },
      { sessionId: "s", adapter: "echo", source: "catalog", resumes: 1 },
      { sessionId: "s", promptId: "p", stopReason: "end_turn", error: "x" },
      { sessionId: "s", exit: { code: 0, signal: null } },
      { sessionId: "s", stalledSinceMs: 1, lastTurnErrorMessage: "m" },
      { sessionId: "s", promptId: "p", sender: { kind: "session", id: "o" }, enqueuedAt: 1 },
      { sessionId: "s", profile: "p", remaining: 1, window: "5h", threshold: 2 },
      { sessionId: "s", verdict: "stuck", reason: "r", suggestedPrompt: "p", trigger: "stalled", model: "m", at: 1 },
      {
        sessionId: "s",
        model: "m",
        inputTokens: 1,
        window: 2,
        pct: 50,
        source: "agent",
        threshold: "warn",
        atPct: 50,
        alsoCrossed: ["x"],
        continuedAs: "t",
      },
    ];
    for (const s of samples) expect(undeclaredKeys(s, t.payloadSchema)).toEqual([]);
  });
});

describe("session.lifecycle arguments", () => {
  it("every valid argument set gives a clause the engine accepts, matching the events it names (property)", () => {
    fc.assert(
      fc.property(
        fc.option(sessionId, { nil: undefined }),
        fc.option(fc.uniqueArray(what, { minLength: 1, maxLength: 4 }), { nil: undefined }),
        sessionId,
        what,
        (session, whats, other, w) => {
          const types = whats?.map((x) => `session.${x}`);
          const match = t.toMatch({ ...(session ? { session } : {}), ...(types ? { types } : {}) });
          expect(
            sentinelSpecSchema.safeParse({
              match,
              until: { kind: "never" },
              target: { kind: "test" },
              provider: "sessions",
            }).success,
          ).toBe(true);
          const index = new SentinelIndex();
          index.add("x", [{ sentinelId: "x", subject: match[0]!.subject, types: match[0]!.types! }]);
          const of = (id: string, x: string) => toSessionEvent(heard(`session:${x}`, { sessionId: id }))!;
          const sid = session ?? other;
          expect(index.match(of(sid, whats?.[0] ?? w)).has("x")).toBe(true);
          if (session) expect(index.match(of(`${session}x`, whats?.[0] ?? w)).size).toBe(0);
          if (whats && !whats.includes(w)) expect(index.match(of(sid, w)).size).toBe(0);
        },
      ),
    );
  });

  it("takes globs: session.context-* is every context event", () => {
    expect(t.toMatch({ types: ["session.context-*"] })).toEqual([
      { subject: "session:*", types: ["session.context-*"] },
    ]);
  });

  it.each([
    [{ session: "a b" }, /^invalid arguments for session\.lifecycle: session: must be a session id/],
    [
      { types: ["ended"] },
      /types\[0\]: must be a session event type or glob, e\.g\. session\.ended or session\.context-\*; known: session\.started/,
    ],
    [{ types: [] }, /types: give at least one type, or omit types for every one/],
    [{ types: ["session.ended", "session.ended"] }, /types: must not repeat a type/],
    [{ subject: "session:x" }, /subject: is not an argument of session\.lifecycle; its arguments are session, types/],
  ])("refuses %j", (args, message) => {
    expect(() => t.toMatch(args as Record<string, unknown>)).toThrow(message);
  });
});
