import { describe, expect, it } from "vitest";
import { defineRedactor, type RedactorPlugin } from "../../../core/plugin-api/index.js";
import { createLogger } from "../../../core/runtime/logger.js";
import { DaemonRedactionService } from "../../../core/redaction/service.js";
import { judgeRedactorSlug, traceRedactorSlug } from "../../../core/redaction/slug.js";
import type { RedactionInput } from "../../../core/redaction/redaction.js";

const HELD = "held-secret-value-0123";
const content = (text: string, sessionId?: string): RedactionInput => ({
  text,
  key: "transcript",
  content: true,
  surface: "judge",
  ...(sessionId ? { sessionId } : {}),
});

function service(plugins: Record<string, RedactorPlugin> = {}, held = { values: [HELD], failed: [] as string[] }) {
  const lines: string[] = [];
  const msgs = () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg).join("\n");
  const svc = new DaemonRedactionService({
    held: async () => held,
    paths: { home: "/home/alice" },
    plugin: async (slug) => {
      const p = plugins[slug];
      if (!p) throw new Error(`no redactor "${slug}"`);
      return p;
    },
    logger: createLogger({ sink: (l) => lines.push(l) }),
  });
  return { svc, lines, msgs };
}

describe("RedactionService", () => {
  it("defaults to metadata: content dropped, metadata kept after the floor", async () => {
    const r = await service().svc.forSlug(undefined);
    expect(r.slug).toBe("metadata");
    expect(r.carriesContent).toBe(false);
    expect(r.apply(content("hi"))).toBeUndefined();
    expect(r.apply({ text: `model x ${HELD}`, key: "gen_ai.request.model", content: false, surface: "trace" })).toBe(
      "model x [redacted]",
    );
  });

  it("runs the secrets floor after a plugin redactor, whatever it returns", async () => {
    const leaky = defineRedactor({ kind: "leaky", redact: (text) => `${text} ghp_abcdefghijklmnop1234 ${HELD}` });
    const r = await service({ leaky }).svc.forSlug("leaky");
    expect(r.carriesContent).toBe(true);
    expect(r.apply(content("hello"))).toBe("hello [redacted] [redacted]");
  });

  it("passes the plugin the context, and paths gets the home directory", async () => {
    const seen: unknown[] = [];
    const spy = defineRedactor({ kind: "spy", redact: (text, ctx) => (seen.push(ctx), text.toUpperCase()) });
    const { svc } = service({ spy });
    expect((await svc.forSlug("spy")).apply(content("abc", "ses_1"))).toBe("ABC");
    expect(seen).toEqual([{ key: "transcript", content: true, surface: "judge", sessionId: "ses_1" }]);
    expect((await svc.forSlug("paths")).apply(content("/home/alice/x"))).toBe("~/x");
  });

  it("fails closed for a redactor that throws or returns a non-string, logging once per slug and never the text", async () => {
    const throws = defineRedactor({
      kind: "throws",
      redact: (text) => {
        throw new Error(`boom ${text}`);
      },
    });
    const bad = defineRedactor({ kind: "bad", redact: () => 42 as unknown as string });
    const { svc, lines } = service({ throws, bad });
    const t = await svc.forSlug("throws");
    expect(t.apply(content("planted-text-1"))).toBeUndefined();
    expect(t.apply(content("planted-text-2"))).toBeUndefined();
    expect((await svc.forSlug("bad")).apply(content("planted-text-3"))).toBeUndefined();
    expect(lines.filter((l) => l.includes('"throws"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('"bad"'))).toHaveLength(1);
    expect(lines.join("\n")).not.toMatch(/planted-text/);
  });

  it("fails closed for an unknown slug and when a held-secret source cannot be read", async () => {
    const { svc, msgs } = service();
    const r = await svc.forSlug("nope");
    expect(r.carriesContent).toBe(false);
    expect(r.apply(content("x"))).toBeUndefined();
    expect(msgs()).toMatch(/redactor "nope" is unavailable/);
    const broken = service({}, { values: [], failed: ["credentials.json"] });
    const s = await broken.svc.forSlug("secrets");
    expect(s.carriesContent).toBe(false);
    expect(s.apply(content("x"))).toBeUndefined();
    expect(broken.msgs()).toMatch(/credentials\.json/);
  });

  it("chooses the judge's redactor: traceRedactor when set, else secrets; traces default to metadata", () => {
    expect(judgeRedactorSlug({})).toBe("secrets");
    expect(judgeRedactorSlug({ defaults: { traceRedactor: "paths" } })).toBe("paths");
    expect(traceRedactorSlug({})).toBeUndefined();
  });
});
