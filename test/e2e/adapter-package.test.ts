/**
 * An adapter package written the way the README teaches (the fixture `svc-fixture-adapter`, an echo
 * agent of kind `echo`), installed with `svc adapters install` and started by the real daemon
 * through the real CLI. Config also has an `acpAgents.echo` (an ACP agent answering `echo: …`), so
 * every answer below also proves the package wins the slug over config (SPEC.md's order).
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { REPO_ROOT } from "../support/paths.js";
import { fixtureAgent } from "../core/sessions/harness.js";
import { makeSandbox, PACKAGES } from "../core/plugin-host/sandbox.js";

interface Line {
  seq: number;
  type: string;
  data?: Record<string, any>;
}

const cli = (args: string[]) => runCli(args, { home: fx.sandbox.home, cwd: fx.sandbox.cwd, env: fx.sandbox.env });
const parseLines = (text: string): Line[] =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The adapter example of docs/writing-an-adapter.md. */
async function readmeAdapterExample(): Promise<string> {
  const section = await readFile(join(REPO_ROOT, "docs/writing-an-adapter.md"), "utf8");
  const blocks = [...section.matchAll(/```(?:js|ts)\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes("defineAdapter("));
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

/** A package in the install location whose adapter does not implement the session contract. */
async function placeMadeUpAdapter(): Promise<void> {
  const dir = join(fx.sandbox.install, "node_modules", "svc-adapter-made-up");
  await mkdir(dir, { recursive: true });
  const manifest = {
    schema: "svc/adapter/v1",
    svc: ">=0.20.0",
    plugins: [{ type: "adapter", kind: "made-up", entry: "./index.js" }],
  };
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "svc-adapter-made-up", version: "1.0.0", type: "module", "svc-adapter": manifest }),
  );
  await writeFile(
    join(dir, "index.js"),
    'import { defineAdapter } from "svc/plugin-api";\nexport default defineAdapter({ kind: "made-up", setup: () => ({ slugs: () => ["made-up"], async run(prompt) { return `echo: ${prompt}`; } }) });\n',
  );
}

const fx = useDaemonProcess({
  makeHome: makeSandbox,
  setup: async (sb) => {
    const src = await sb.source("svc-fixture-adapter");
    const install = await cli(["adapters", "install", src]);
    expect(install.code, install.stderr).toBe(0);
    await placeMadeUpAdapter();
    const config = JSON.parse(await readFile(join(sb.home, "config.json"), "utf8")) as { adapters: string[] };
    expect(config.adapters).toEqual(["svc-fixture-adapter"]);
    await sb.writeConfig({
      ...config,
      adapters: [...config.adapters, "svc-adapter-made-up"],
      acpAgents: { echo: fixtureAgent("echo-agent.mjs", { name: "Echo over ACP, shadowed by the package" }) },
    });
    return { env: { SVC_INSTALL_DIR: sb.install } };
  },
});

describe("an adapter package written from the README, run by the real daemon", () => {
  it("is the README's adapter example verbatim, and that example type-checks as TypeScript against @svc/plugin-api", async () => {
    const example = await readmeAdapterExample();
    expect(await readFile(join(PACKAGES, "svc-fixture-adapter", "index.js"), "utf8")).toBe(example);
    const dir = join(fx.sandbox.src, "echo-ts");
    await mkdir(join(dir, "src"), { recursive: true });
    await writeFile(join(dir, "src", "index.ts"), example);
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: true,
        noEmit: true,
      },
      include: ["src"],
    };
    await writeFile(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
    execFileSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { stdio: "pipe" });
  });

  it("svc sessions start --adapter echo starts the package adapter (not acpAgents.echo); a prompt's reply is in the transcript and served by the route; stop ends it", async () => {
    const started = await cli(["sessions", "start", "--adapter", "echo", "--json"]);
    expect(started.code, started.stderr).toBe(0);
    const { descriptor } = JSON.parse(started.stdout) as {
      descriptor: { id: string; source: string; kind: string; eventsPath: string };
    };
    expect(descriptor).toMatchObject({ source: "package", kind: "agent" });
    expect(descriptor.eventsPath).toBe(join(fx.sandbox.home, "sessions", descriptor.id, "events.jsonl"));

    const prompted = await cli(["sessions", "prompt", descriptor.id, "hello there", "--wait", "--json"]);
    expect(prompted.code, prompted.stderr).toBe(0);
    expect(JSON.parse(prompted.stdout).result).toMatchObject({ stopReason: "end_turn", text: "You said: hello there" });

    const disk = async () => parseLines(await readFile(descriptor.eventsPath, "utf8"));
    await until(async () => (await disk()).some((l) => l.type === "turn.ended"), "turn.ended in events.jsonl");
    const lines = await disk();
    expect(lines.find((l) => l.type === "session.started")!.data).toMatchObject({
      info: { agent: "echo", version: "1.0.0" },
    });
    expect(lines.filter((l) => l.type === "update")).toEqual([
      expect.objectContaining({
        data: {
          kind: "agent_message_chunk",
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "You said: hello there" } },
        },
      }),
    ]);
    const res = await fx.daemon.fetch(`/sessions/${descriptor.id}/events`, { auth: false });
    expect(res.status).toBe(200);
    expect(parseLines(await res.text()).slice(0, lines.length)).toEqual(lines);

    const stopped = await cli(["sessions", "stop", descriptor.id]);
    expect(stopped.code, stopped.stderr).toBe(0);
    await until(async () => (await disk()).some((l) => l.type === "session.ended"), "session.ended in events.jsonl");
    expect((await disk()).filter((l) => l.type === "session.ended").map((l) => l.data)).toEqual([
      { code: 0, signal: null, error: "stopped" },
    ]);
  });

  it("svc sessions run --adapter echo prints the package's answer", async () => {
    const r = await cli(["sessions", "run", "--adapter", "echo", "--prompt", "ping"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("You said: ping\n");
  });

  it("an adapter package whose setup returns no start(spec, sink) cannot start a session: exit 1 naming the package and the contract, and the daemon keeps serving", async () => {
    const r = await cli(["sessions", "start", "--adapter", "made-up"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('setup of adapter "made-up" returned no start(spec, sink) function');
    expect(r.stderr).toContain("svc-adapter-made-up");
    const again = await cli(["sessions", "run", "--adapter", "echo", "--prompt", "still here"]);
    expect(again.stdout).toBe("You said: still here\n");
  });
});
