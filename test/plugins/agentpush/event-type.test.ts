/** `agentpush.event` (issue 27): subject (exact or prefix) and type globs, as the engine takes them. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SUBJECT_LENGTH_MAX } from "../../../core/plugin-api/limits.js";
import { SentinelIndex } from "../../../core/sentinels/matcher.js";
import { sentinelSpecSchema } from "../../../core/sentinels/spec-schema.js";
import { agentpushEventType as t } from "../../../plugins/agentpush/event-type.js";
import { undescribedProperties } from "../../support/json-schema.js";

const subject = fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !s.endsWith("*"));
const typeName = fc.stringMatching(/^[a-z]{1,8}(\.[a-z]{1,8}){0,3}$/);

describe("agentpush.event", () => {
  it("describes its arguments and refuses others in its schema", () => {
    expect(t.name).toBe("agentpush.event");
    expect(t.inputSchema).toMatchObject({ type: "object", additionalProperties: false, required: ["subject"] });
    expect(undescribedProperties(t.inputSchema)).toEqual([]);
    expect(t.payloadSchema.description).toMatch(/as the pusher gave it/);
  });

  it("an exact subject matches events carrying it, with the given types (property)", () => {
    fc.assert(
      fc.property(
        subject,
        fc.option(fc.uniqueArray(typeName, { minLength: 1, maxLength: 4 }), { nil: undefined }),
        typeName,
        (s, types, other) => {
          const match = t.toMatch({ subject: s, ...(types ? { types } : {}) });
          expect(match).toEqual([{ subject: s, ...(types ? { types } : {}) }]);
          expect(
            sentinelSpecSchema.safeParse({
              match,
              until: { kind: "never" },
              target: { kind: "test" },
              provider: "agentpush",
            }).success,
          ).toBe(true);
          const index = new SentinelIndex();
          index.add("x", [{ sentinelId: "x", subject: s, types: types ?? ["*"] }]);
          expect(index.match({ type: types?.[0] ?? other, subjects: ["ci:all", s] }).has("x")).toBe(true);
          expect(index.match({ type: types?.[0] ?? other, subjects: [`${s}/more`] }).size).toBe(0);
        },
      ),
    );
  });

  it("a subject ending in * is a prefix: every event under it matches (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.string({ maxLength: 30 }), (prefix, rest) => {
        const [clause] = t.toMatch({ subject: `${prefix}*` });
        const index = new SentinelIndex();
        index.add("x", [{ sentinelId: "x", subject: clause!.subject, types: ["*"] }]);
        expect(index.match({ type: "any.thing", subjects: [prefix + rest] }).has("x")).toBe(true);
      }),
    );
  });

  it.each([
    [{}, /^invalid arguments for agentpush\.event: subject: is required: A subject the pushed events carry/],
    [{ subject: "" }, /subject: must not be empty/],
    [{ subject: "x".repeat(SUBJECT_LENGTH_MAX + 1) }, /subject: must be at most 1000 characters/],
    [{ subject: "ci:x", types: [] }, /types: give at least one type glob, or omit types for every type/],
    [{ subject: "ci:x", types: [""] }, /types\[0\]: must not be empty/],
    [
      { subject: "ci:x", subjects: ["a"] },
      /subjects: is not an argument of agentpush\.event; its arguments are subject, types/,
    ],
    [{ subject: 7 }, /subject: /],
  ])("refuses %j", (args, message) => {
    expect(() => t.toMatch(args as Record<string, unknown>)).toThrow(message);
  });
});
