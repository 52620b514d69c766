import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../../core/config/resolve.js";
import { SvcError } from "../../../core/errors.js";
import { loadConfigFile, validateConfigTree } from "../../../core/config/load.js";
import { configSchema } from "../../../core/config/schema.js";
import { makeTempHome } from "../../support/cli.js";

const FILE = "/h/config.json";

function errorOf(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (e) {
    if (SvcError.is(e)) return e;
    throw e;
  }
  throw new Error("expected an error");
}

describe("loadConfigFile", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  beforeEach(async () => (home = await makeTempHome()));
  afterEach(() => home.cleanup());

  it("an absent file is an empty configuration and is not created", async () => {
    const path = join(home.home, "config.json");
    const r = await loadConfigFile(path);
    expect(r).toMatchObject({ exists: false, raw: {}, config: {}, warnings: [] });
    await expect(import("node:fs/promises").then((fs) => fs.stat(path))).rejects.toThrow(/ENOENT/);
  });

  it("a file that is not JSON is config_invalid naming the file", async () => {
    const path = join(home.home, "config.json");
    await writeFile(path, "{ daemon: ");
    await expect(loadConfigFile(path)).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining(path),
    });
  });

  it("a file that is not JSON is described by position, never quoted (a token near the fault stays out of the log)", async () => {
    const path = join(home.home, "config.json");
    await writeFile(path, '{\n  "daemon": {"authToken": sk-ant-SECRET123}\n}');
    const err = await loadConfigFile(path).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toContain(`${path} is not valid JSON (an unexpected character at position 28 (line 2))`);
    expect(err?.message).not.toContain("SECRET");
  });
});

describe("validateConfigTree", () => {
  it.each([
    [{ daemon: { port: "80" } }, "daemon.port", 'the string "80"', "a number"],
    [{ daemon: { port: 70000 } }, "daemon.port", "got 70000", "must be 0..65535"],
    [{ daemon: { port: 1.5 } }, "daemon.port", "got 1.5", "must be a whole number"],
    [{ sessions: { attentionDelaySec: -1 } }, "sessions.attentionDelaySec", "got -1", "must be at least 0"],
    [
      { worktrees: { isolation: "sometimes" } },
      "worktrees.isolation",
      'the string "sometimes"',
      '"always", "on-request", "never"',
    ],
    [{ adapters: "pkg" }, "adapters", 'the string "pkg"', "an array"],
    [
      { defaults: { messaging: { agentInterrupt: "maybe" } } },
      "defaults.messaging.agentInterrupt",
      'the string "maybe"',
      '"allow", "deny"',
    ],
    [{ models: { "review.small": 5 } }, "models.review.small", "the number 5", "model id string or {model"],
    [{ pairing: { rendezvous: "http://x" } }, "pairing.rendezvous", 'the string "http://x"', "ws:// or wss://"],
    [{ tunnel: { e2e: true } }, "tunnel.e2e", "the boolean true", "requires tunnel.token"],
    [{ webhooks: { allowSubnets: ["10.0.0.0/33"] } }, "webhooks.allowSubnets[0]", "10.0.0.0/33", "CIDR"],
  ])("%j: names the file, key %s, what was found and what is allowed", (tree, key, found, allowed) => {
    const e = errorOf(() => validateConfigTree(FILE, tree));
    expect(e.code).toBe("config_invalid");
    expect(e.message).toContain(FILE);
    expect(e.message).toContain(`key ${key}`);
    expect(e.message).toContain(found);
    expect(e.message).toContain(allowed);
  });

  it.each([
    [{ extJudge: "sk-ant-SECRET123" }, "extJudge", "sk-ant-SECRET123"],
    [
      { defaults: { adapters: { claude: { auth: "sk-ant-SECRET456" } } } },
      "defaults.adapters.claude.auth",
      "sk-ant-SECRET456",
    ],
    [{ profiles: { p: { tunnel: "tun-SECRET789" } } }, "profiles.p.tunnel", "tun-SECRET789"],
    [{ daemon: { authToken: 424242424242 } }, "daemon.authToken", "424242424242"],
    [{ tunnel: { token: ["tok-SECRETabc"] } }, "tunnel.token", "tok-SECRETabc"],
  ])("never shows a secret in an error: %j", (tree, key, secret) => {
    const e = errorOf(() => validateConfigTree(FILE, tree));
    expect(e.message).toContain(`key ${key}`);
    expect(e.message).not.toContain(secret);
    expect(JSON.stringify(e.details ?? null)).not.toContain(secret);
  });

  it("a profile's tunnel.e2e falls through to the top-level token", () => {
    expect(() =>
      validateConfigTree(FILE, { tunnel: { token: "t" }, profiles: { p: { tunnel: { e2e: true } } } }),
    ).not.toThrow();
    expect(errorOf(() => validateConfigTree(FILE, { profiles: { p: { tunnel: { e2e: true } } } })).message).toContain(
      "profiles.p.tunnel.e2e",
    );
  });

  it("drops a malformed acpAgents entry with a warning and loads the rest", () => {
    const r = validateConfigTree(FILE, {
      acpAgents: { good: { bin: "agent" }, bad: { name: "no bin" }, worse: 7 },
      daemon: { port: 1 },
    });
    expect(Object.keys(r.config.acpAgents!)).toEqual(["good"]);
    expect(r.warnings).toHaveLength(2);
    expect(r.warnings[0]).toMatch(/acpAgents\.bad dropped: key acpAgents\.bad\.bin: found nothing, allowed: a string/);
    // An entry may hold secrets (its env map), so a wrong value in its place is shown by kind only.
    expect(r.warnings[1]).toMatch(
      /acpAgents\.worse dropped: key acpAgents\.worse: found a number \(value hidden\), allowed: an object/,
    );
    expect(r.config.daemon!.port).toBe(1);
    expect((r.raw.acpAgents as Record<string, unknown>).bad).toEqual({ name: "no bin" });
  });

  it("an acpAgents entry dropped for a field other than bin names that field, and never quotes env values", () => {
    const r = validateConfigTree(FILE, {
      acpAgents: {
        a: { bin: "agent", resumable: "yes" },
        b: { bin: "agent", env: "ANTHROPIC_API_KEY=sk-ant-SECRET123" },
        c: { bin: "agent", env: { ANTHROPIC_API_KEY: ["sk-ant-SECRET456"] } },
      },
    });
    expect(r.config.acpAgents).toEqual({});
    expect(r.warnings[0]).toMatch(
      /acpAgents\.a dropped: key acpAgents\.a\.resumable: found the string "yes", allowed: a boolean/,
    );
    expect(r.warnings[1]).toMatch(/acpAgents\.b dropped: key acpAgents\.b\.env: found a string \(value hidden\)/);
    expect(r.warnings[2]).toMatch(/acpAgents\.c dropped: key acpAgents\.c\.env\.ANTHROPIC_API_KEY: found an array/);
    expect(r.warnings.join("\n")).not.toContain("SECRET");
    expect(r.warnings.join("\n")).not.toContain('needs a string "bin"');
  });

  it("in an env map, a secret-named variable's value is hidden and another's shown, alike in acpAgents and terminalPresets (as config show does)", () => {
    const r = validateConfigTree(FILE, {
      acpAgents: { a: { bin: "x", env: { GH_TOKEN: 424242 } }, b: { bin: "x", env: { MODE: 7 } } },
    });
    expect(r.warnings[0]).toMatch(/key acpAgents\.a\.env\.GH_TOKEN: found a number \(value hidden\)/);
    expect(r.warnings[1]).toMatch(/key acpAgents\.b\.env\.MODE: found the number 7,/);
    expect(
      errorOf(() => validateConfigTree(FILE, { terminalPresets: { t: { env: { GH_TOKEN: 424242 } } } })).message,
    ).toMatch(/found a number \(value hidden\)/);
    expect(errorOf(() => validateConfigTree(FILE, { terminalPresets: { t: { env: { MODE: 7 } } } })).message).toMatch(
      /found the number 7,/,
    );
    expect(r.warnings.join("\n")).not.toContain("424242");
  });

  it("ignores invalid provisionConcurrencyByRepo entries with a warning", () => {
    const r = validateConfigTree(FILE, { worktrees: { provisionConcurrencyByRepo: { a: 1, b: -1, c: "2", d: 1.5 } } });
    expect(r.config.worktrees!.provisionConcurrencyByRepo).toEqual({ a: 1 });
    expect(r.warnings).toHaveLength(3);
  });

  it("keeps unknown keys at every depth", () => {
    const tree = {
      future: 1,
      daemon: { later: [1] },
      defaults: { messaging: { x: true }, adapters: { a: { auth: { y: 1 } } } },
    };
    const r = validateConfigTree(FILE, tree);
    expect(r.config).toMatchObject(tree);
  });

  it('absent stays distinct from ""', () => {
    expect(validateConfigTree(FILE, { pairing: { rendezvous: "" } }).config.pairing).toEqual({ rendezvous: "" });
    expect(validateConfigTree(FILE, { pairing: {} }).config.pairing).toEqual({});
  });

  it("a daemon.allowedHosts entry that is not a bare hostname says what is allowed", () => {
    expect(errorOf(() => validateConfigTree(FILE, { daemon: { allowedHosts: ["svc.lan:18790"] } })).message).toMatch(
      /daemon\.allowedHosts\[0\].*must be a hostname or an IP address alone \(no scheme, port, path or wildcard\)/,
    );
  });

  it("the top level must be an object", () => {
    expect(errorOf(() => validateConfigTree(FILE, [1])).message).toMatch(
      /top level must be a JSON object, found an array/,
    );
  });
});

describe("the schema covers every SPEC.md key", () => {
  const SPEC_KEYS: Record<string, string[]> = {
    "": [
      "adapters",
      "profileAliases",
      "corpusPresetPackages",
      "daemon",
      "pairing",
      "defaults",
      "acpAgents",
      "worktrees",
      "spawn",
      "provenance",
      "terminalPresets",
      "sessions",
      "features",
      "models",
      "extJudge",
      "tunnel",
      "profiles",
      "activeProfile",
      "webhooks",
    ],
    daemon: ["port", "bind", "allowedOrigins", "authToken", "turnStallAfterMs"],
    pairing: ["rendezvous", "autoconnect", "pairPage"],
    defaults: [
      "skills",
      "options",
      "adapters",
      "defaultRoleDepthCutoff",
      "maxGrantableDelegation",
      "extTracing",
      "traceRedactor",
      "agentPromptInterrupt",
      "contextContinuity",
      "messaging",
    ],
    worktrees: ["root", "isolation", "provisionConcurrency", "provisionConcurrencyByRepo", "provisionLoadFactor"],
    spawn: ["attach", "dedupe"],
    provenance: ["wrapGh"],
    sessions: ["attentionDelaySec", "eventsDir"],
    features: ["pty", "llmEndpoint"],
    extJudge: ["apiKey", "model", "baseUrl"],
    tunnel: ["host", "token", "autoconnect", "e2e"],
    store: [], // SPEC.md has no store section: svc's keys are below
  };
  // Keys svc adds where SPEC.md is silent, each documented in docs/configuration.md's reference.
  const SVC_KEYS: Record<string, string[]> = {
    daemon: ["logMaxBytes", "logFiles", "allowedHosts"], // the log file's rotation (docs/operations.md); Host names (docs/authorization.md)
    pairing: ["allowedRoots"], // where a paired device with the operate scope may work (docs/remote.md)
    defaults: ["traceEndpoint"], // where traces go (docs/tracing.md); SPEC.md names extTracing and traceRedactor
    extJudge: ["windowSec", "timeoutSec"], // the session steward's budget window and request timeout (docs/steward.md)
    "": ["llmEndpoint", "store"], // the sidecar (docs/llm-endpoint.md); the team store (docs/team-mode.md)
    store: ["url", "keyFile"], // files or PostgreSQL, and the team key (docs/team-mode.md)
  };
  it.each(Object.entries(SPEC_KEYS))("section %s", (section, keys) => {
    const shape = configSchema.shape as unknown as Record<
      string,
      { unwrap?: () => { shape: Record<string, unknown> } }
    >;
    const fields = section === "" ? shape : shape[section]!.unwrap!().shape;
    expect(Object.keys(fields).sort()).toEqual([...keys, ...(SVC_KEYS[section] ?? [])].sort());
  });

  it.each([
    [{ pairing: { pairPage: "https://{fp}.pair.example.com/" } }, true],
    [{ pairing: { pairPage: "https://pair.example.com/x" } }, true],
    [{ pairing: { pairPage: "https://pair.example.com/{fp}" } }, false],
    [{ pairing: { pairPage: "ftp://{fp}.example.com" } }, false],
    [{ extJudge: { baseUrl: "https://judge.example.com" } }, true],
    [{ extJudge: { baseUrl: "ftp://judge.example.com" } }, false],
    [{ defaults: { traceEndpoint: "http://127.0.0.1:4318/v1/traces" } }, true],
    [{ defaults: { traceEndpoint: "grpc://127.0.0.1:4317" } }, false],
    [{ worktrees: { root: "relative" } }, false],
    [{ worktrees: { provisionLoadFactor: -1 } }, false],
    [{ terminalPresets: { a: { argv: [] } } }, false],
    [{ terminalPresets: { a: { argv: ["top"], cwd: "rel" } } }, true],
    [{ defaults: { options: { a: true, b: 1, c: "x" } } }, true],
    [{ defaults: { options: { a: [1] } } }, false],
    [{ defaults: { adapters: { x: { auth: { mode: "sso" } } } } }, false],
    [{ defaults: { contextContinuity: { warnAtPct: 101 } } }, false],
    [{ models: { "review.large": { model: "m", route: "r", profile: "p" } } }, true],
    [{ models: { "review.large": { route: "r" } } }, false],
    [{ profileAliases: { fast: 1 } }, false],
    [{ corpusPresetPackages: [""] }, false],
    [{ activeProfile: "" }, false],
    [{ webhooks: { allowSubnets: ["::1/128", "127.0.0.0/8"] } }, true],
    [{ daemon: { allowedHosts: ["svc.lan", "Box-1.example", "192.168.1.20", "2001:db8::1", "[2001:db8::1]"] } }, true],
    [{ daemon: { allowedHosts: ["http://svc.lan"] } }, false],
    [{ daemon: { allowedHosts: ["svc.lan:18790"] } }, false],
    [{ daemon: { allowedHosts: ["*.svc.lan"] } }, false],
    [{ daemon: { allowedHosts: ["svc.lan/ui"] } }, false],
    [{ daemon: { allowedHosts: ["-svc.lan"] } }, false],
    [{ daemon: { allowedHosts: [""] } }, false],
  ])("%j valid: %s", (tree, ok) => {
    expect(configSchema.safeParse(tree).success).toBe(ok);
  });
});

describe("property: any JSON tree", () => {
  const sections = fc.constantFrom(
    "daemon",
    "pairing",
    "defaults",
    "acpAgents",
    "worktrees",
    "spawn",
    "models",
    "tunnel",
    "profiles",
    "activeProfile",
    "future",
  );
  it("either loads and resolves, or fails with config_invalid; the raw tree is never altered", () => {
    fc.assert(
      fc.property(fc.dictionary(sections, fc.jsonValue({ maxDepth: 3 })), (tree) => {
        const copy = structuredClone(tree);
        let loaded: ReturnType<typeof validateConfigTree> | undefined;
        try {
          loaded = validateConfigTree(FILE, tree);
        } catch (e) {
          expect(SvcError.is(e) && e.code).toBe("config_invalid");
        }
        expect(tree).toEqual(copy);
        if (loaded) {
          expect(loaded.raw).toEqual(copy);
          try {
            resolveConfig(loaded.config, {}, {}, "/h");
          } catch (e) {
            expect(SvcError.is(e) && e.code).toBe("config_invalid");
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
