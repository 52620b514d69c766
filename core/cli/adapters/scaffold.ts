/**
 * What `svc adapters init` writes: a package with a provider and/or a target, a README, and a
 * test that installs the package into a scratch `$SVC_HOME`, runs the real daemon and waits for
 * its events to arrive. Plain JavaScript by default (no build step, no dependencies); `--typescript`
 * adds a tsconfig, sources under src/ and, for the build's types, the dev dependency
 * `"@svc/plugin-api": "file:vendor/svc-plugin-api-<version>.tgz"`: the types-only package, which
 * init.ts packs into the package (svc is not on the public registry, so `npm install` there fetches
 * only typescript, Node's types and what the types reach, such as zod). The running svc provides the
 * module at run time, and a dev dependency is never installed with the package. Pure: returns the
 * files, writes nothing (not the tarball either).
 */
import { SVC_VERSION } from "../../version.js";

export interface ScaffoldOptions {
  /** npm package name. */
  name: string;
  provider?: string;
  target?: string;
  /** A `redactor` plugin of this kind (docs/redaction.md). */
  redactor?: string;
  typescript: boolean;
}

export type ScaffoldFiles = Map<string, string>;

const MAJOR_MINOR = SVC_VERSION.split(".").slice(0, 2).join(".");
const HOST_RANGE = `>=${MAJOR_MINOR}.0`;
/** Where the `--typescript` scaffold keeps the types-only `@svc/plugin-api` tarball, relative to its root. */
export const TYPES_TARBALL = `vendor/svc-plugin-api-${SVC_VERSION}.tgz`;

export function scaffold(o: ScaffoldOptions): ScaffoldFiles {
  const files: ScaffoldFiles = new Map();
  const ext = o.typescript ? "ts" : "js";
  const src = (base: string) => (o.typescript ? `src/${base}.ts` : `${base}.js`);
  const entry = (base: string) => (o.typescript ? `./dist/${base}.js` : `./${base}.js`);
  const plugins: Array<Record<string, string>> = [];
  if (o.provider) {
    plugins.push({
      type: "provider",
      kind: o.provider,
      entry: entry("provider"),
      description: `Emits a ${o.provider}.sample.emitted event on every poll`,
    });
    files.set(src("provider"), providerSource(o.provider, o.typescript));
  }
  if (o.target) {
    plugins.push({
      type: "target",
      kind: o.target,
      entry: entry("target"),
      description: "Appends every matched event to deliveries.jsonl in its storage folder",
    });
    files.set(src("target"), targetSource(o.target, o.typescript));
  }
  if (o.redactor) {
    plugins.push({
      type: "redactor",
      kind: o.redactor,
      entry: entry("redactor"),
      description: "Replaces e-mail addresses with <email>",
    });
    files.set(src("redactor"), redactorSource(o.redactor, o.typescript));
  }
  const pkg: Record<string, unknown> = {
    name: o.name,
    version: "0.1.0",
    description: `svc adapter package: ${plugins.map((p) => `${p.type} ${p.kind}`).join(", ")}`,
    type: "module",
    license: "MIT",
    keywords: ["svc-adapter"],
    files: o.typescript ? ["dist"] : plugins.map((p) => p.entry!.slice(2)),
    scripts: o.typescript
      ? { build: "tsc -p .", pretest: "npm run build", test: "node --test test/" }
      : { test: "node --test test/" },
    ...(o.typescript
      ? {
          devDependencies: {
            "@svc/plugin-api": `file:${TYPES_TARBALL}`,
            "@types/node": "^20.19.0",
            typescript: "~5.9",
          },
        }
      : {}),
    "svc-adapter": { schema: "svc/adapter/v1", svc: HOST_RANGE, plugins },
  };
  files.set("package.json", JSON.stringify(pkg, null, 2) + "\n");
  if (o.typescript) files.set("tsconfig.json", TSCONFIG);
  files.set(
    `test/adapter.test.${o.typescript ? "js" : ext}`,
    o.provider || o.target ? testSource(o) : redactorTestSource(o),
  );
  files.set(".gitignore", o.typescript ? "node_modules/\ndist/\n" : "node_modules/\n");
  files.set("README.md", readme(o));
  return files;
}

/**
 * `@svc/plugin-api` is typed from the types-only dev dependency in node_modules; the emitted
 * JavaScript keeps the import, which the running svc answers.
 */
const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "skipLibCheck": true,
    "types": ["node"],
    "rootDir": "src",
    "outDir": "dist"
  },
  "include": ["src"]
}
`;

function providerSource(kind: string, ts: boolean): string {
  return `import { defineProvider${ts ? ", type SvcEvent" : ""} } from "@svc/plugin-api";

/**
 * The \`${kind}\` provider. Each poll (\`svc sentinel poll-now\`, the MCP tool sentinel_poll_now)
 * emits one event; replace pollNow's body with a call to the service you watch. Events need a
 * stable \`id\` (no "."), a \`type\` of the form <scheme>.<object>.<action>, and \`subjects\` from
 * the broadest to the most specific: sentinels match on those.
 */
export default defineProvider({
  kind: "${kind}",
  description: "Emits a ${kind}.sample.emitted event on every poll",
  setup(ctx) {
    let polls = 0;
    return {
      defaultTypes: () => ["${kind}.sample.emitted"],
      readiness: async () => ({ ready: true, detail: "nothing to configure" }),
      async pollNow() {
        polls += 1;
        const event${ts ? ": SvcEvent" : ""} = {
          id: \`${kind}-\${ctx.random.ulid()}\`,
          type: "${kind}.sample.emitted",
          subjects: ["${kind}:demo"],
          time: new Date(ctx.clock.now()).toISOString(),
          data: { polls },
        };
        ctx.logger.info("${kind} emitted an event", { polls });
        await ctx.service("sentinels").ingest(ctx.kind, [event]);
      },
    };
  },
});
`;
}

function targetSource(kind: string, ts: boolean): string {
  return `import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { defineTarget, z } from "@svc/plugin-api";

const input = z.strictObject({ kind: z.literal("${kind}"), note: z.string().max(200).optional() });

/**
 * The \`${kind}\` target. A sentinel whose target is \`{"kind": "${kind}"}\` hands it every matched
 * event; this one appends a line per event to deliveries.jsonl in its own storage folder
 * ($SVC_HOME/plugins/target-${kind}/). Replace deliver's body with what your target does, and
 * return {ack: "now"} once the event is safely handled.
 */
export default defineTarget({
  kind: "${kind}",
  description: "Appends every matched event to deliveries.jsonl in its storage folder",
  setup(ctx) {
    const file = join(ctx.storageDir, "deliveries.jsonl");
    return {
      inputSchema: input,
      create: async (raw${ts ? ": unknown" : ""}) => {
        const t = input.parse(raw);
        return { kind: "${kind}", ...(t.note ? { note: t.note } : {}) };
      },
      project: (stored) => ({ kind: stored.kind, ...(stored.note ? { note: stored.note } : {}) }),
      async deliver({ sentinel, event }) {
        await mkdir(ctx.storageDir, { recursive: true });
        await appendFile(file, JSON.stringify({ sentinelId: sentinel.id, eventId: event.id, type: event.type, subjects: event.subjects }) + "\\n");
        return { ack: "now" };
      },
    };
  },
});
`;
}

function redactorSource(kind: string, ts: boolean): string {
  return `import { defineRedactor } from "@svc/plugin-api";

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}/g;

/**
 * The \`${kind}\` redactor (defaults.traceRedactor: "${kind}"). A pure function: the text as it may
 * leave the daemon (a trace attribute, a request to the steward's judge). No I/O, no state; throwing
 * or returning a non-string drops the text. svc's \`secrets\` floor runs after it on every result.
 */
export default defineRedactor({
  kind: "${kind}",
  description: "Replaces e-mail addresses with <email>",
  redact: (text${ts ? ": string" : ""}) => text.replace(EMAIL, "<email>"),
});
`;
}

/** The imports and the `svc(args, env)` helper of a scaffolded test. */
function testPrelude(o: { spawn: boolean }): string {
  return `import assert from "node:assert/strict";
import { execFile${o.spawn ? ", spawn" : ""} } from "node:child_process";
import { mkdtemp, ${o.spawn ? "readFile, " : ""}rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const pkgDir = fileURLToPath(new URL("..", import.meta.url));
const SVC = process.env.SVC_BIN ? [process.execPath, process.env.SVC_BIN] : ["svc"];

function svc(args, env) {
  return new Promise((resolve, reject) => {
    execFile(SVC[0], [...SVC.slice(1), ...args], { env }, (err, stdout, stderr) =>
      err ? reject(new Error(\`svc \${args.join(" ")} failed: \${stderr || err.message}\`)) : resolve(stdout),
    );
  });
}
`;
}

/** The test of a redactor-only package: the real svc installs and loads it. */
function redactorTestSource(o: ScaffoldOptions): string {
  return `/**
 * Installs this package into a scratch $SVC_HOME with \`svc adapters install\` and checks that svc
 * loads its redactor (\`svc adapters ls --load\` imports it as the daemon does). Needs \`svc\` on
 * PATH (or SVC_BIN=<path to svc.js>). Run it with \`npm test\`.
 */
${testPrelude({ spawn: false })}
test("redactor ${o.redactor}: svc installs and loads it", { timeout: 120_000 }, async (t) => {
  const home = await mkdtemp(join(tmpdir(), "svc-adapter-test-"));
  const env = { ...process.env, SVC_HOME: home };
  delete env.SVC_INSTALL_DIR;
  t.after(() => rm(home, { recursive: true, force: true }));
  await svc(["adapters", "install", pkgDir], env);
  const ls = JSON.parse(await svc(["adapters", "ls", "--load", "--json"], env));
  const pkg = ls.packages.find((p) => p.id === "${o.name}");
  assert.ok(pkg, "the package is listed");
  assert.deepEqual(pkg.plugins.map((p) => [p.type, p.kind, p.status]), [["redactor", "${o.redactor}", "wins"]]);
});
`;
}

/** The test: the package in a real daemon, from install to an arrived event. */
function testSource(o: ScaffoldOptions): string {
  const provider = o.provider;
  const target = o.target;
  const subject = provider ? `${provider}:demo` : "demo:hello";
  const sentinel = target
    ? `  // A sentinel with this package's target (the CLI sends the daemon's token for a plugin target).
  await svc(["sentinel", "create", "--target", "${target}", "--subject", "${provider ? `${provider}:*` : "demo:*"}", "--provider", "${provider ?? "agentpush"}", "--label", "adapter test"], env);
`
    : `  // A sentinel on this provider with a session target: with no such session running, each event is
  // parked for it (svc sentinel status shows the parked events).
  const { id } = JSON.parse(await svc(["sentinel", "watch", "${provider}:*", "--provider", "${provider}", "--session", "ses_adaptertest", "--json"], env));
`;
  const emit = provider
    ? `  await svc(["sentinel", "poll-now"], env);\n`
    : `  await svc(["sentinel", "push", "${subject}", "--type", "demo.sample.sent", "--data", '{"hello": "world"}'], env);\n`;
  const arrived = target
    ? `  const file = join(home, "plugins", "target-${target}", "deliveries.jsonl");
  const line = await until(async () => (await readFile(file, "utf8").catch(() => "")).split("\\n").find(Boolean), \`a line in \${file}\`);
  const delivered = JSON.parse(line);
  assert.equal(delivered.type, "${provider ? `${provider}.sample.emitted` : "demo.sample.sent"}");
  assert.deepEqual(delivered.subjects, ["${subject}"]);
`
    : `  const parked = await until(async () => {
    const s = JSON.parse(await svc(["sentinel", "status", id, "--json"], env));
    return s.target.parkedEvents.length > 0 ? s.target.parkedEvents : undefined;
  }, "the event to reach the session target");
  assert.match(parked[0].eventId, /^${provider}-/);
`;
  return `/**
 * Runs this package in a real svc daemon: installs it into a scratch $SVC_HOME with
 * \`svc adapters install\`, starts \`svc serve\` on a free port, makes a sentinel and waits for an
 * event to arrive. Needs \`svc\` on PATH (or SVC_BIN=<path to svc.js>). Run it with \`npm test\`.
 */
${testPrelude({ spawn: true })}
async function until(probe, what, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(\`timed out waiting for \${what}\`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("${[provider && `provider ${provider}`, target && `target ${target}`].filter(Boolean).join(" and ")}: an event arrives through the real daemon", { timeout: 120_000 }, async (t) => {
  const home = await mkdtemp(join(tmpdir(), "svc-adapter-test-"));
  const env = { ...process.env, SVC_HOME: home };
  delete env.SVC_INSTALL_DIR;
  t.after(() => rm(home, { recursive: true, force: true }));

  await svc(["adapters", "install", pkgDir], env);
  const daemon = spawn(SVC[0], [...SVC.slice(1), "serve", "--port", "0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  daemon.stderr.on("data", (d) => (log += d));
  const exited = new Promise((r) => daemon.once("exit", r));
  t.after(async () => {
    daemon.kill("SIGTERM");
    await exited;
  });
  await until(() => svc(["sentinel", "list"], env), \`the daemon to start (its log: \${log})\`);

${sentinel}${emit}${arrived}});
`;
}

function readme(o: ScaffoldOptions): string {
  const what = [
    o.provider && `a provider \`${o.provider}\``,
    o.target && `a target \`${o.target}\``,
    o.redactor && `a redactor \`${o.redactor}\``,
  ]
    .filter(Boolean)
    .join(" and ");
  return `# ${o.name}

An svc adapter package with ${what}, made by \`svc adapters init\`.

- ${o.typescript ? "`src/`: the plugins (TypeScript; `npm run build` compiles them to `dist/`)" : "`provider.js` / `target.js` / `redactor.js`: the plugins (plain JavaScript, no build step)"}.
- \`package.json\`, key \`svc-adapter\`: the manifest (\`svc/adapter/v1\`) naming each plugin's type, kind and entry.
- \`test/adapter.test.js\`: installs the package into a scratch \`$SVC_HOME\`, ${o.provider || o.target ? "runs the real daemon and\n  waits for an event to arrive" : "and checks that svc loads it"}. ${o.typescript ? "`npm install && npm test`" : "`npm test`"} runs it (svc must be on PATH, or set SVC_BIN).

The plugins import \`@svc/plugin-api\`, which the running svc provides at run time: the package
needs no copy of svc.${o.typescript ? ` For the build's types it has the types-only package \`@svc/plugin-api\` as a dev dependency,\nfrom \`${TYPES_TARBALL}\` (written by \`svc adapters init\`; keep it with the package): \`npm install\` installs\nit from there and takes only public packages (typescript, Node's types, what the types import)\nfrom the registry. A dev dependency is never installed with the package: at run time the host provides the module.` : " It has no dependencies."}

Use it: \`svc adapters install ./${o.name}\`, then restart \`svc serve\`.
`;
}
