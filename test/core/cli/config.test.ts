import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli } from "../../support/cli.js";

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

const homes: Array<{ cleanup(): Promise<void> }> = [];
afterAll(() => Promise.all(homes.map((h) => h.cleanup())));

/** A fresh SVC_HOME per test (tests run concurrently), removed after the file. */
async function useHome() {
  const home = await makeTempHome("svc-config-cli-");
  homes.push(home);
  const file = join(home.home, "config.json");
  return {
    home,
    file,
    svc: (args: string[], env?: NodeJS.ProcessEnv, input?: string) =>
      runCli(args, { home: home.home, ...(env ? { env } : {}), ...(input !== undefined ? { input } : {}) }),
    readConfig: async () => JSON.parse(await readFile(file, "utf8")) as Record<string, any>,
  };
}

describe.concurrent("svc config (real CLI, temporary SVC_HOME)", () => {
  it("no read path creates config.json", async () => {
    const { svc, file } = await useHome();
    for (const args of [
      ["config", "show"],
      ["config", "show", "--effective", "--json"],
      ["config", "get", "daemon.port"],
      ["config", "path"],
      ["config", "schema"],
      ["config", "unset", "daemon.port"],
    ]) {
      const r = await svc(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    expect(await exists(file)).toBe(false);
    expect((await svc(["config", "path"])).stdout.trim()).toBe(file);
    expect(JSON.parse((await svc(["config", "path", "--json"])).stdout)).toEqual({ path: file, exists: false });
  });

  it("config path loads only the path rules, not the schema, loader or resolver (cold start)", async () => {
    const { svc, file, home } = await useHome();
    const log = join(home.home, "loaded.txt");
    // A resolve hook in the child that writes down every module it loads.
    const hooks = `data:text/javascript,${encodeURIComponent(`import { appendFileSync } from "node:fs"; export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }`)}`;
    const register = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(hooks)});`)}`;
    const r = await svc(["config", "path"], { NODE_OPTIONS: `--import=${register}` });
    expect(r.stdout.trim(), r.stderr).toBe(file);
    const loaded = (await readFile(log, "utf8")).split("\n");
    expect(loaded.some((u) => u.endsWith("/core/config/config-path.js"))).toBe(true);
    expect(loaded.filter((u) => /\/zod\/|\/core\/config\/(?!config-path\.js)/.test(u))).toEqual([]);
  });

  it("set writes JSON values or strings, --string forces a string, get reads them back with sources", async () => {
    const { svc, readConfig } = await useHome();
    expect((await svc(["config", "set", "daemon.port", "19000"])).code).toBe(0);
    expect((await svc(["config", "set", "defaults.traceRedactor", "plain text"])).code).toBe(0);
    expect((await svc(["config", "set", "profileAliases.fast", "123", "--string"])).code).toBe(0);
    expect(await readConfig()).toEqual({
      daemon: { port: 19000 },
      defaults: { traceRedactor: "plain text" },
      profileAliases: { fast: "123" },
    });
    expect((await svc(["config", "get", "daemon.port", "--source"])).stdout.trim()).toBe("19000  (config)");
    expect((await svc(["config", "get", "daemon.bind", "--source"])).stdout.trim()).toBe("127.0.0.1  (default)");
    expect(
      (await svc(["config", "get", "spawn.attach", "--source"], { SVC_SPAWN_ATTACH: "on-request" })).stdout.trim(),
    ).toBe("on-request  (env SVC_SPAWN_ATTACH)");
    expect(JSON.parse((await svc(["config", "get", "daemon.port", "--json", "--source"])).stdout)).toEqual({
      key: "daemon.port",
      value: 19000,
      source: "config",
    });
    const section = (await svc(["config", "get", "daemon", "--source"])).stdout;
    expect(section).toContain("daemon.port = 19000  (config)");
    expect(section).toContain('daemon.bind = "127.0.0.1"  (default)');
    const unsetKey = await svc(["config", "get", "daemon.authToken"]);
    expect(unsetKey.code).toBe(1);
    expect(unsetKey.stderr).toMatch(/daemon\.authToken is not set/);
  });

  // Twenty CLI processes in a row: on a machine at load 25 that took over 120 s, so its guard is wider.
  it("unknown keys survive twenty mixed set/unset calls, and each write changes only its key", async () => {
    const { svc, file, readConfig } = await useHome();
    const initial = {
      future: { nested: { keep: [1, 2, 3] } },
      daemon: { port: 18800, experimental: { x: true } },
      defaults: {
        messaging: { allowSiblings: true, laterField: "kept" },
        adapters: { claude: { auth: { mode: "subscription", extra: 1 } } },
      },
      acpAgents: { mine: { bin: "agent", customFlag: "yes" } },
    };
    await writeFile(file, JSON.stringify(initial, null, 2));
    // A secret is piped on stdin (the third element), never given on the command line.
    const ops: Array<[string[], (c: Record<string, any>) => void, string?]> = [
      [["set", "daemon.port", "18801"], (c) => (c.daemon.port = 18801)],
      [["set", "spawn.attach", "on-request"], (c) => (c.spawn = { attach: "on-request" })],
      [["unset", "daemon.port"], (c) => delete c.daemon.port],
      [["set", "models.review.small", "claude-haiku-4-5"], (c) => (c.models = { "review.small": "claude-haiku-4-5" })],
      [["set", "defaults.messaging.agentInterrupt", "allow"], (c) => (c.defaults.messaging.agentInterrupt = "allow")],
      [["unset", "spawn.attach"], (c) => (c.spawn = {})],
      [["set", "worktrees.isolation", "always"], (c) => (c.worktrees = { isolation: "always" })],
      [["set", "acpAgents.other", '{"bin":"other-agent"}'], (c) => (c.acpAgents.other = { bin: "other-agent" })],
      [["unset", "models.review.small"], (c) => (c.models = {})],
      [["set", "features.pty", "true"], (c) => (c.features = { pty: true })],
      [
        ["set", "defaults.adapters.claude.auth.mode", "api-key"],
        (c) => (c.defaults.adapters.claude.auth.mode = "api-key"),
      ],
      [["unset", "worktrees.isolation"], (c) => (c.worktrees = {})],
      [["set", "tunnel.token"], (c) => (c.tunnel = { token: "tok" }), "tok\n"],
      [["set", "tunnel.e2e", "true"], (c) => (c.tunnel.e2e = true)],
      [["unset", "features.pty"], (c) => (c.features = {})],
      [["set", "sessions.attentionDelaySec", "30"], (c) => (c.sessions = { attentionDelaySec: 30 })],
      [["unset", "acpAgents.other"], (c) => delete c.acpAgents.other],
      [["set", "extJudge.model", "ext-latest"], (c) => (c.extJudge = { model: "ext-latest" })],
      [["unset", "sessions.attentionDelaySec"], (c) => (c.sessions = {})],
      [
        ["set", "daemon.allowedOrigins", '["https://a.example"]'],
        (c) => (c.daemon.allowedOrigins = ["https://a.example"]),
      ],
    ];
    const expected: Record<string, any> = structuredClone(initial);
    for (const [args, apply, input] of ops) {
      const r = await svc(["config", ...args], undefined, input);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      apply(expected);
      expect(await readConfig(), args.join(" ")).toEqual(expected);
    }
    expect((await readConfig()).future).toEqual(initial.future);
  }, 360_000);

  it.each([
    [["daemon.port", "not-a-port"], /key daemon\.port: found the string "not-a-port", allowed: a number/],
    [["daemon.port", "70000"], /daemon\.port/],
    [["worktrees.isolation", "sometimes"], /one of "always", "on-request", "never"/],
    [["pairing.pairPage", "https://x.example/{fp}"], /\{fp\} in the hostname/],
    [["tunnel.e2e", "true"], /tunnel\.e2e: true requires tunnel\.token/],
    [["acpAgents.broken", '{"name":"no bin"}'], /acpAgents\.broken\.bin/],
    [["daemon.port.deeper", "1"], /cannot set daemon\.port\.deeper: daemon\.port holds a number/],
  ])("a bad value (%j) never changes the file and says why", async (args, why) => {
    const { svc, file } = await useHome();
    const original = '{\n  "daemon": { "port": 18800 },\n  "keep": "me"\n}\n';
    await writeFile(file, original);
    const r = await svc(["config", "set", ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(why);
    expect(r.stderr).not.toContain("sk-secret-value");
    expect(await readFile(file, "utf8")).toBe(original);
    expect(await exists(file + ".lock")).toBe(false);
  });

  it("a failed first set does not create the file", async () => {
    const { svc, file } = await useHome();
    expect((await svc(["config", "set", "daemon.port", "x"])).code).toBe(1);
    expect(await exists(file)).toBe(false);
  });

  it("setting a secret (or a section holding one) never echoes it", async () => {
    const { svc, readConfig } = await useHome();
    for (const [key, input] of [
      ["tunnel.token", "tok-secret-1"],
      ["tunnel", '{"token":"tok-secret-2"}'],
      ["defaults.adapters.a.auth", '{"apiKey":"key-secret-3"}'],
    ] as const) {
      const r = await svc(["config", "set", key], undefined, input);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/secret-\d/);
    }
    expect((await readConfig()).tunnel.token).toBe("tok-secret-2");
  });

  it("extJudge.model and extJudge.baseUrl are writable", async () => {
    const { svc, readConfig } = await useHome();
    expect((await svc(["config", "set", "extJudge.model", "judge-2"])).code).toBe(0);
    expect((await svc(["config", "set", "extJudge.baseUrl", "https://judge.example.com/v1"])).code).toBe(0);
    expect(await readConfig()).toEqual({ extJudge: { model: "judge-2", baseUrl: "https://judge.example.com/v1" } });
  });

  it("two processes setting different keys at once both persist", async () => {
    const { svc, file, readConfig } = await useHome();
    await writeFile(file, JSON.stringify({ untouched: true }));
    const keys = Array.from({ length: 6 }, (_, i) => `k${i}`);
    const results = await Promise.all(keys.map((k, i) => svc(["config", "set", `profileAliases.${k}`, `pkg-${i}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const cfg = await readConfig();
    expect(cfg.untouched).toBe(true);
    expect(Object.keys(cfg.profileAliases).sort()).toEqual(keys);
  });

  it("models.<role> with an unknown id warns and is accepted; get models --source shows the role table", async () => {
    const { svc } = await useHome();
    const r = await svc(["config", "set", "models.review.small", "my-local-model"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/not in the model catalog; accepted/);
    expect((await svc(["config", "set", "models.review.pr", "claude-sonnet-4-5"])).stderr).toBe("");
    const table = (await svc(["config", "get", "models", "--source"])).stdout;
    expect(table).toContain('models.review.small = "my-local-model"  (config)');
    expect(table).toMatch(/models\.review\.large = "[^"]+" {2}\(default\)/);
    expect(table).toMatch(/models\.judge\.session = "[^"]+" {2}\(default\)/);
    expect((await svc(["config", "get", "models.review.small", "--source"])).stdout.trim()).toBe(
      "my-local-model  (config)",
    );
  });

  it("secrets are redacted unless --reveal; show warns when the file holds extJudge.apiKey and others can read it", async () => {
    const { svc, file } = await useHome();
    const cfg = {
      daemon: { authToken: "tok-daemon-123" },
      tunnel: { token: "tok-tunnel-456" },
      extJudge: { apiKey: "sk-judge-789" },
      defaults: { adapters: { a: { auth: { token: "tok-a-1", apiKey: "key-a-2" } } } },
    };
    await writeFile(file, JSON.stringify(cfg));
    await chmod(file, 0o644);
    for (const args of [
      ["config", "show"],
      ["config", "show", "--json"],
      ["config", "show", "--effective"],
      ["config", "get", "daemon"],
      ["config", "get", "extJudge.apiKey"],
      ["config", "get", "defaults.adapters", "--json"],
    ]) {
      const r = await svc(args);
      expect(r.code, r.stderr).toBe(0);
      for (const secret of ["tok-daemon-123", "tok-tunnel-456", "sk-judge-789", "tok-a-1", "key-a-2"])
        expect(r.stdout + r.stderr, args.join(" ")).not.toContain(secret);
      expect(r.stdout).toContain("[redacted]");
    }
    const shown = await svc(["config", "show"]);
    expect(shown.stderr).toMatch(
      /holds daemon\.authToken, tunnel\.token, extJudge\.apiKey and 2 more and is readable by group or others \(mode 0644\).*chmod 600/,
    );
    const revealed = JSON.parse((await svc(["config", "show", "--json", "--reveal"])).stdout);
    expect(revealed).toEqual(cfg);
    await chmod(file, 0o600);
    expect((await svc(["config", "show"])).stderr).toBe("");
  });

  it("secret-named variables of the spawn recipes' env maps are redacted in show, get and set; other variables are shown", async () => {
    const { svc, file } = await useHome();
    const cfg = {
      acpAgents: { claude: { bin: "claude-acp", env: { ANTHROPIC_API_KEY: "sk-ant-123", MODE: "fast" } } },
      terminalPresets: { dev: { argv: ["bash"], env: { GH_TOKEN: "ghx-456", DB_PASSWORD: "pw-789", EDITOR: "vim" } } },
    };
    await writeFile(file, JSON.stringify(cfg));
    for (const args of [
      ["config", "show"],
      ["config", "show", "--json"],
      ["config", "show", "--effective"],
      ["config", "get", "acpAgents"],
      ["config", "get", "terminalPresets.dev.env", "--json"],
      ["config", "get", "acpAgents.claude.env.ANTHROPIC_API_KEY"],
    ]) {
      const r = await svc(args);
      expect(r.code, r.stderr).toBe(0);
      for (const secret of ["sk-ant-123", "ghx-456", "pw-789"])
        expect(r.stdout + r.stderr, args.join(" ")).not.toContain(secret);
      expect(r.stdout, args.join(" ")).toContain("[redacted]");
    }
    await chmod(file, 0o640);
    expect((await svc(["config", "show"])).stderr).toMatch(
      /holds acpAgents\.claude\.env\.ANTHROPIC_API_KEY, terminalPresets\.dev\.env\.GH_TOKEN, terminalPresets\.dev\.env\.DB_PASSWORD and is readable by group or others \(mode 0640\)/,
    );
    await chmod(file, 0o600);
    const json = JSON.parse((await svc(["config", "show", "--json"])).stdout);
    expect(json.acpAgents.claude.env).toEqual({ ANTHROPIC_API_KEY: "[redacted]", MODE: "fast" });
    expect(json.terminalPresets.dev.env).toEqual({ GH_TOKEN: "[redacted]", DB_PASSWORD: "[redacted]", EDITOR: "vim" });
    const set = await svc(["config", "set", "acpAgents.claude.env.OPENAI_API_KEY"], undefined, "sk-oai-000\n");
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain("sk-oai-000");
    expect((await svc(["config", "set", "acpAgents.claude.env.MODE", "slow"])).stdout).toContain('"slow"');
    expect(
      JSON.parse((await svc(["config", "show", "--json", "--reveal"])).stdout).acpAgents.claude.env.OPENAI_API_KEY,
    ).toBe("sk-oai-000");
  });

  it("show --effective folds defaults, file, profile and env in, with sources", async () => {
    const { svc, file, home } = await useHome();
    await writeFile(
      file,
      JSON.stringify({ daemon: { port: 1 }, profiles: { work: { daemon: { port: 2 } } }, activeProfile: "work" }),
    );
    const r = await svc(["config", "show", "--effective"], { SVC_TURN_STALL_AFTER_MS: "5" });
    expect(r.stdout).toContain("daemon.port = 2  (profile work)");
    expect(r.stdout).toContain("daemon.turnStallAfterMs = 5  (env SVC_TURN_STALL_AFTER_MS)");
    expect(r.stdout).toContain(`worktrees.root = ${JSON.stringify(join(home.home, "worktrees"))}  (default)`);
    const json = JSON.parse((await svc(["config", "show", "--effective", "--json"])).stdout);
    expect(json.daemon.port).toBe(2);
    expect(json.spawn).toEqual({ attach: "always", dedupe: "always" });
  });

  it("--profile <missing> is fatal; activeProfile naming a missing profile warns and falls back", async () => {
    const { svc, file } = await useHome();
    await writeFile(file, JSON.stringify({ daemon: { port: 7 }, profiles: { work: {} }, activeProfile: "gone" }));
    const fatal = await svc(["config", "get", "daemon.port", "--profile", "nope"]);
    expect(fatal.code).toBe(1);
    expect(fatal.stderr).toMatch(/--profile nope: no such profile.*work/);
    const warned = await svc(["config", "get", "daemon.port"]);
    expect(warned.code).toBe(0);
    expect(warned.stdout.trim()).toBe("7");
    expect(warned.stderr).toMatch(/activeProfile "gone" names no profile/);
  });

  it("an env value that does not parse is an error naming the variable", async () => {
    const { svc } = await useHome();
    const r = await svc(["config", "get", "daemon.port"], { SVC_WORKTREES_PROVISION_CONCURRENCY: "lots" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/SVC_WORKTREES_PROVISION_CONCURRENCY="lots" is invalid/);
  });

  it("a hand-edited bad file: not JSON, or a wrong type, names file, key, found and allowed; set refuses too", async () => {
    const { svc, file } = await useHome();
    await writeFile(file, "{ not json");
    const notJson = await svc(["config", "show"]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain(file);
    expect(notJson.stderr).toMatch(/not valid JSON/);
    expect((await svc(["config", "set", "daemon.port", "1"])).code).toBe(1);
    expect(await readFile(file, "utf8")).toBe("{ not json");
    await writeFile(file, JSON.stringify({ spawn: { dedupe: 3 } }));
    const wrong = await svc(["config", "get", "spawn"]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      `${file}: key spawn.dedupe: found the number 3, allowed: one of "always", "on-request"`,
    );
  });

  it("a malformed acpAgents entry is dropped with a warning and the rest loads", async () => {
    const { svc, file } = await useHome();
    await writeFile(file, JSON.stringify({ acpAgents: { ok: { bin: "a" }, bad: { bin: 5 } }, daemon: { port: 9 } }));
    const r = await svc(["config", "get", "acpAgents", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: { bin: "a" } });
    expect(r.stderr).toMatch(/acpAgents\.bad dropped/);
    expect(JSON.parse((await svc(["config", "show", "--json"])).stdout).acpAgents.bad).toEqual({ bin: 5 });
  });

  it("unset removes only the key; an absent key changes nothing", async () => {
    const { svc, file, readConfig } = await useHome();
    await writeFile(file, JSON.stringify({ daemon: { port: 1, bind: "127.0.0.2" } }));
    expect((await svc(["config", "unset", "daemon.port"])).stdout).toContain("unset daemon.port");
    expect(await readConfig()).toEqual({ daemon: { bind: "127.0.0.2" } });
    const before = await readFile(file, "utf8");
    const r = await svc(["config", "unset", "daemon.port"]);
    expect(r.stdout).toMatch(/was not set; nothing changed/);
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it("usage errors exit 2; every verb has --help", async () => {
    const { svc } = await useHome();
    expect((await svc(["config", "set", "daemon.port"])).code).toBe(2);
    expect((await svc(["config", "get", "a..b"])).code).toBe(2);
    for (const verb of ["show", "get", "set", "unset", "schema", "path"]) {
      const r = await svc(["config", verb, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`config ${verb}`);
    }
  });
});
