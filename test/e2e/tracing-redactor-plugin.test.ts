/**
 * Issue 26: a `redactor` plugin from a package, installed while the real daemon runs, redacts what
 * a traced session exports (and the secrets floor still runs after it); one that throws fails
 * closed: the content is dropped, the spans still leave.
 */
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { startOtlpReceiver, type DecodedSpan, type OtlpReceiver } from "../support/otlp-receiver.js";
import { makeSandbox } from "../core/plugin-host/sandbox.js";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";

/** What the fixture's `shout` redactor appends to every text, on purpose: the floor must catch it. */
const LEAK = "ghp_fixtureleak0123456789";

let otlp: OtlpReceiver | undefined;
const cli = (args: string[]) => runCli(args, { home: fx.sandbox.home, cwd: fx.sandbox.cwd, env: fx.sandbox.env });
const post = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

const fx = useDaemonProcess({
  makeHome: makeSandbox,
  setup: async (sb) => {
    otlp = await startOtlpReceiver();
    await sb.writeConfig({
      adapters: [],
      acpAgents: FIXTURE_AGENTS,
      defaults: { extTracing: true, traceRedactor: "shout", traceEndpoint: otlp.tracesUrl },
    });
    return {
      env: {
        SVC_INSTALL_DIR: sb.install,
        OTEL_BSP_SCHEDULE_DELAY: "50",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      },
    };
  },
});

async function tracedTurn(text: string): Promise<string> {
  const d = fx.daemon;
  const started = await d.fetch("/sessions", post({ adapter: "echo", cwd: fx.sandbox.cwd }));
  expect(started.ok).toBe(true);
  const { descriptor } = (await started.json()) as { descriptor: { id: string } };
  expect((await d.fetch(`/sessions/${descriptor.id}/prompt`, post({ text, wait: true }))).ok).toBe(true);
  expect((await d.fetch(`/sessions/${descriptor.id}/stop`, { method: "POST" })).ok).toBe(true);
  return descriptor.id;
}

const turnOf = (id: string) => (all: DecodedSpan[]) => {
  // A redactor sees every attribute, metadata too: `shout` upper-cases the session id as well.
  const root = all.find(
    (s) =>
      s.name.startsWith("invoke_agent ") &&
      [id, id.toUpperCase()].some((v) => String(s.attributes["gen_ai.agent.id"]).startsWith(v)),
  );
  return root && all.find((s) => s.name === "turn 1" && s.traceId === root.traceId);
};

describe("a redactor plugin installed while the daemon runs", () => {
  it("redacts traced content, the secrets floor after it; one that throws drops the content and keeps the spans", async () => {
    try {
      const install = await cli(["adapters", "install", await fx.sandbox.source("svc-fixture-redactor")]);
      expect(install.code, install.stderr).toBe(0);

      const shouted = await tracedTurn("hello from the shout test");
      const turn = await otlp!.waitFor(turnOf(shouted), "the shouted session's turn span");
      expect(String(turn.attributes["gen_ai.input.messages"])).toContain("HELLO FROM THE SHOUT TEST");
      for (const b of otlp!.bodies) {
        expect(b.includes("hello from the shout test")).toBe(false);
        expect(b.includes(LEAK)).toBe(false);
      }

      const set = await cli(["config", "set", "defaults.traceRedactor", "throws"]);
      expect(set.code, set.stderr).toBe(0);
      // The daemon reads config.json when it changes: wait until a new session is traced with it.
      // A throwing redactor drops every attribute it is given, the session id too: find the session's
      // spans as the newest root and its turn.
      const roots = (all: DecodedSpan[]) => all.filter((x) => x.name.startsWith("invoke_agent "));
      let dropped: DecodedSpan | undefined;
      for (let i = 0; !dropped; i++) {
        expect(i, "a session traced with the throwing redactor").toBeLessThan(20);
        const before = roots(otlp!.spans).length;
        await tracedTurn(`words the throwing redactor must drop ${i}`);
        const root = await otlp!.waitFor((all) => roots(all)[before], "the next session's root span");
        const t = await otlp!.waitFor(
          (all) => all.find((x) => x.name === "turn 1" && x.traceId === root.traceId),
          "its turn span",
        );
        if (root.attributes["gen_ai.agent.id"] === undefined) dropped = t;
      }
      expect(dropped.attributes["gen_ai.input.messages"]).toBeUndefined();
      // Case matters: sessions traced before the change was read carry the shouted (upper-case) text.
      for (const b of otlp!.bodies) expect(b.includes("words the throwing redactor must drop")).toBe(false);
      expect(fx.daemon.logs()).toContain(`redactor \\"throws\\" threw`);
      expect(fx.daemon.logs()).not.toContain("words the throwing");
    } finally {
      await otlp?.close();
    }
  });
});
