/**
 * Issue 44: the real coding agents svc's catalog names (Claude Code, Codex, Gemini CLI), installed
 * from the npm registry by the tests' own set-up (test/support/real-agents.ts), run under a real
 * daemon end to end. The model providers are the one part we cannot reach: a scripted model
 * server on loopback speaks their APIs (test/support/scripted-model-server.ts). Each agent starts
 * from its catalog entry alone (no acpAgents entry), its model calls go through the llm-endpoint
 * sidecar with the key configured in svc, and the user's $HOME is never touched (a scratch HOME).
 */
import { sessionSentinel } from "../../../support/agentpush.js";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { environOf } from "../../../support/process-alive.js";
import { until } from "../../../support/until.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACP_CATALOG } from "../../../../core/config/acp-catalog.js";
import { useDaemonProcess, type DaemonProcess } from "../../../support/cli.js";
import { realAgents, AGENT_PINS, type AgentsOrSkip } from "../../../support/real-agents.js";
import {
  startScriptedModelServer,
  writeFilePrompt,
  type ScriptedModelServer,
} from "../../../support/scripted-model-server.js";

interface AgentCase {
  slug: string;
  /** The npm package, for the pinned version in messages. */
  pkg: string;
  /** The sidecar route (provider) its calls take, and the upstream base URL's suffix. */
  provider: "anthropic" | "openai" | "gemini";
  suffix: string;
  models: string[];
  /** A model the test asks for, which the agent must use. */
  model: string;
}

const AGENTS: AgentCase[] = [
  {
    slug: "claude",
    pkg: "@agentclientprotocol/claude-agent-acp",
    provider: "anthropic",
    suffix: "",
    models: ["claude-*"],
    model: "claude-sonnet-4-5",
  },
  {
    slug: "codex",
    pkg: "@agentclientprotocol/codex-acp",
    provider: "openai",
    suffix: "/v1",
    models: ["gpt-*"],
    model: "gpt-6-luna",
  },
  {
    slug: "gemini",
    pkg: "@google/gemini-cli",
    provider: "gemini",
    suffix: "",
    models: ["gemini-*"],
    model: "gemini-2.5-pro",
  },
  {
    slug: "opencode",
    pkg: "opencode-ai",
    provider: "openai",
    suffix: "/v1",
    // Not gpt-*: for those OpenCode offers apply_patch in place of write.
    models: ["scripted-*"],
    model: "scripted-open-1",
  },
];

/** How long a wait may take before it counts as a hang: real agents on a busy machine, never a speed check. */
const GUARD_MS = 300_000;

let installed: AgentsOrSkip | undefined;
beforeAll(async () => {
  installed = await realAgents();
  if ("skip" in installed) console.warn(`\n*** SKIPPED: the real-agent tests did not run: ${installed.skip} ***\n`);
}, 20 * 60_000);

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

async function body(r: Promise<Response>): Promise<any> {
  const res = await r;
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Every live process whose environment names the session (the agent and whatever it started). */
function processesOf(sessionId: string): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/environ`, "utf8").includes(`SVC_SESSION_ID=${sessionId}\0`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" });
}

const only = process.env.SVC_LIVE_AGENTS?.split(",");
for (const agent of AGENTS.filter((a) => !only || only.includes(a.slug))) {
  // A real agent beside the rest of the suite on a busy machine: a guard against a hang, not a speed check.
  describe(`${agent.slug} (${agent.pkg}@${AGENT_PINS[agent.pkg]}) under svc, from the catalog`, {
    timeout: 600_000,
  }, () => {
    const KEY = `sk-${agent.slug}-live-${randomBytes(12).toString("hex")}`;
    let server: ScriptedModelServer;
    let repo = "";
    let skip: string | undefined;
    const fx = useDaemonProcess({
      prefix: `svc-live-${agent.slug}-`,
      setup: async ({ home }) => {
        server = await startScriptedModelServer();
        if (!installed || "skip" in installed) {
          skip = installed && "skip" in installed ? installed.skip : "the agents were not installed";
          return;
        }
        repo = join(home, "repo");
        await mkdir(repo);
        git(repo, "init", "-q", "-b", "main");
        await writeFile(join(repo, "README.md"), "# live\n");
        git(repo, "add", ".");
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
        const userHome = join(home, "user-home");
        await mkdir(userHome);
        await writeFile(
          join(home, "config.json"),
          JSON.stringify({
            features: { llmEndpoint: true },
            llmEndpoint: {
              port: 0,
              upstreams: {
                [agent.provider]: {
                  provider: agent.provider,
                  baseUrl: server.url + agent.suffix,
                  models: agent.models,
                  // The key configured for this agent serves its route (by default a route takes
                  // the key of its provider's own agent: openai's is codex's).
                  keyFrom: agent.slug,
                },
              },
            },
            defaults: { adapters: { [agent.slug]: { auth: { apiKey: KEY } } } },
            // Only for the start-failure test: the catalog's agent under another slug, with a method it lacks.
            acpAgents: { [`${agent.slug}-wrong`]: { ...ACP_CATALOG[agent.slug], auth: { method: "no-such-method" } } },
          }),
        );
        return { env: { PATH: installed.agents.path, HOME: userHome, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t" } };
      },
    });
    afterAll(async () => server?.close());
    const d = (): DaemonProcess => fx.daemon;

    const prompt = async (sessionId: string, text: string) =>
      (await body(d().fetch(`/sessions/${sessionId}/prompt`, json({ text, wait: true })))).result;

    /** Stops the session and waits until no process of it is left. */
    const stopAndGone = async (sessionId: string) => {
      await d().fetch(`/sessions/${sessionId}/stop`, { method: "POST" });
      await until(
        () => (processesOf(sessionId).length === 0 ? true : undefined),
        `no process of session ${sessionId} left`,
        GUARD_MS,
      );
    };

    it("writes a new file with a tool call, answers a second prompt, uses the requested model, through the sidecar", async (ctx) => {
      if (skip) return ctx.skip();
      const before = server.requests().length;
      const { descriptor } = await body(
        d().fetch("/sessions", json({ adapter: agent.slug, cwd: repo, options: { model: agent.model } })),
      );
      expect(descriptor.source).toBe("catalog");
      expect(descriptor.info.model).toMatchObject({ requested: agent.model, applied: true });

      const file = join(repo, "notes", `from-${agent.slug}.txt`);
      const first = await prompt(descriptor.id, writeFilePrompt(file, `hello from ${agent.slug}`));
      expect(first.stopReason, JSON.stringify(first)).toBe("end_turn");
      expect((await readFile(file, "utf8")).trim()).toBe(`hello from ${agent.slug}`);
      const second = await prompt(descriptor.id, "What is two and two?");
      expect(second.stopReason).toBe("end_turn");
      expect(second.text).toContain("ok: What is two and two?");

      const calls = server.requests().slice(before);
      expect(calls.some((c) => c.model === agent.model)).toBe(true);
      // Every call reached the model server through the sidecar, with the key configured in svc…
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) expect(c.credential.value).toBe(KEY);
      // …which the agent's own environment does not hold.
      const environ = environOf(descriptor.pid);
      expect(Object.values(environ)).not.toContain(KEY);
      // Claude Code as root accepts IS_SANDBOX=1 only: a set IS_SANDBOX reaches it as 1.
      if (agent.slug === "claude" && process.env.IS_SANDBOX) expect(environ.IS_SANDBOX).toBe("1");
      const seen = await body(d().fetch(`/sessions/${descriptor.id}`));
      expect(seen.descriptor.modelUsage.calls).toBeGreaterThan(0);

      await stopAndGone(descriptor.id);
    });

    it("runs in its own worktree", async (ctx) => {
      if (skip) return ctx.skip();
      const { descriptor } = await body(
        d().fetch(
          "/sessions",
          json({ adapter: agent.slug, cwd: repo, worktree: true, options: { model: agent.model } }),
        ),
      );
      expect(descriptor.worktree.path).not.toBe(repo);
      const file = join(descriptor.worktree.path, `in-worktree-${agent.slug}.txt`);
      await prompt(descriptor.id, writeFilePrompt(file, "in a worktree"));
      expect((await readFile(file, "utf8")).trim()).toBe("in a worktree");
      expect(existsSync(join(repo, `in-worktree-${agent.slug}.txt`))).toBe(false);
      await stopAndGone(descriptor.id);
    });

    it("gets a sentinel's event as a prompt", async (ctx) => {
      if (skip) return ctx.skip();
      const { descriptor } = await body(
        d().fetch("/sessions", json({ adapter: agent.slug, cwd: repo, options: { model: agent.model } })),
      );
      const sentinel = await body(d().fetch("/sentinels", json(sessionSentinel(descriptor.id, "ci:acme/*"))));
      const push = await d().fetch(
        "/providers/agentpush/events",
        json({ id: `ev-${agent.slug}`, type: "ci.build.failed", subjects: ["ci:acme/api"] }),
      );
      expect(push.status).toBe(200);
      const recap = await until(
        async () => {
          const r = await body(d().fetch(`/sessions/${descriptor.id}/recap`));
          return r.lastResult ? r : undefined;
        },
        "the event's turn",
        GUARD_MS,
      );
      // The scripted model echoes the prompt's first 40 characters: `[svc sentinel <id>…`.
      expect(recap.lastResult.text).toContain(`ok: [svc sentinel ${sentinel.id.slice(0, 20)}`);
      await stopAndGone(descriptor.id);
    });

    it("passes a two-step swarm run", async (ctx) => {
      if (skip) return ctx.skip();
      const file = join(repo, `swarm-${agent.slug}.txt`);
      const swarm = {
        schema: "svc/swarm/v1",
        name: `live-${agent.slug}`,
        steps: [
          { id: "write", adapter: agent.slug, model: agent.model, prompt: writeFilePrompt(file, "step one") },
          {
            id: "report",
            adapter: agent.slug,
            model: agent.model,
            needs: ["write"],
            prompt: "Report: ${{ steps.write.output }}",
          },
        ],
      };
      const { run } = await body(d().fetch("/swarm/runs", json({ swarm, baseDir: repo })));
      const done = await until(
        async () => {
          const got = await body(d().fetch(`/swarm/runs/${run.runId}`));
          return got.run.state !== "running" ? got.run : undefined;
        },
        "the run to end",
        GUARD_MS,
      );
      expect(done.state, JSON.stringify(done.steps)).toBe("succeeded");
      expect((await readFile(file, "utf8")).trim()).toBe("step one");
      expect(done.steps.report.output).toContain("ok: Report:");
      expect(done.steps.write.model).toMatchObject({ applied: true });
    });

    it("a start with an auth method the agent does not offer shows the methods it offers", async (ctx) => {
      if (skip) return ctx.skip();
      const res = await d().fetch("/sessions", json({ adapter: `${agent.slug}-wrong`, cwd: repo }));
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(text).toContain('auth.method is \\"no-such-method\\", which the agent does not offer; it offers');
    });
  });
}

describe("without a key or the model proxy, a start that needs one shows the agent's own error", () => {
  let skip: string | undefined;
  const fx = useDaemonProcess({
    prefix: "svc-live-nokey-",
    setup: async ({ home }) => {
      if (!installed || "skip" in installed) {
        skip = installed && "skip" in installed ? installed.skip : "the agents were not installed";
        return;
      }
      const userHome = join(home, "user-home");
      await mkdir(userHome);
      return {
        env: {
          PATH: installed.agents.path,
          HOME: userHome,
          OPENAI_API_KEY: "",
          CODEX_API_KEY: "",
          OPENAI_BASE_URL: "",
        },
      };
    },
  });

  it("codex: Authentication required, with where the key goes", async (ctx) => {
    if (skip) return ctx.skip();
    const res = await fx.daemon.fetch("/sessions", json({ adapter: "codex", cwd: fx.home }));
    const { error } = (await res.json()) as { error: { message: string; details: { agentError: { code: number } } } };
    expect(res.status).toBe(503);
    expect(error.message).toContain('ACP agent "codex" refused session/new: Authentication required');
    expect(error.message).toContain("defaults.adapters.codex.auth.apiKey");
    expect(error.details.agentError.code).toBe(-32000);
  });
});
