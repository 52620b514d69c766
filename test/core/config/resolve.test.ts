import { join } from "node:path";
import { homedir } from "node:os";
import { describe, expect, it } from "vitest";
import { SvcError } from "../../../core/errors.js";
import { getAt } from "../../../core/config/dotted-path.js";
import { ENV_OVERRIDES } from "../../../core/config/env-overrides.js";
import { formatSource, resolveConfig, type ConfigFlags } from "../../../core/config/resolve.js";
import type { SvcConfigFile } from "../../../core/config/schema.js";

const HOME = "/srv/svc-home";

function resolve(file: SvcConfigFile, env: NodeJS.ProcessEnv = {}, flags: ConfigFlags = {}) {
  return resolveConfig(file, env, flags, HOME);
}

function valueAndSource(r: ReturnType<typeof resolve>, key: string) {
  return { value: getAt(r.effective, key.split(".")), source: formatSource(r.sources[key]!) };
}

function fileWith(key: string, value: unknown): SvcConfigFile {
  const [section, field] = key.split(".");
  return { [section!]: { [field!]: value } } as SvcConfigFile;
}

/** Every key with an override order: a default, a file value, an env value (text and parsed), a flag. */
const ORDERED: Array<{
  key: string;
  dflt: unknown;
  file: unknown;
  env?: [string, string, unknown];
  flag?: [keyof ConfigFlags, unknown, unknown];
  profile?: unknown;
}> = [
  { key: "daemon.port", dflt: 18790, file: 1111, profile: 2222, flag: ["port", 3333, 3333] },
  {
    key: "daemon.bind",
    dflt: "127.0.0.1",
    file: "127.0.0.2",
    profile: "127.0.0.3",
    flag: ["bind", "127.0.0.4", "127.0.0.4"],
  },
  {
    key: "daemon.authToken",
    dflt: undefined,
    file: "file-token",
    profile: "profile-token",
    flag: ["authToken", "flag-token", "flag-token"],
  },
  { key: "daemon.allowedOrigins", dflt: [], file: ["https://a.example"], profile: ["https://b.example"] },
  {
    key: "daemon.turnStallAfterMs",
    dflt: 300000,
    file: 1000,
    profile: 2000,
    env: ["SVC_TURN_STALL_AFTER_MS", "-1", -1],
  },
  {
    key: "worktrees.root",
    dflt: join(HOME, "worktrees"),
    file: "/data/wt",
    env: ["SVC_WORKTREES_ROOT", "/env/wt", "/env/wt"],
  },
  {
    key: "worktrees.isolation",
    dflt: "on-request",
    file: "always",
    env: ["SVC_WORKTREES_ISOLATION", "never", "never"],
  },
  { key: "worktrees.provisionConcurrency", dflt: 2, file: 4, env: ["SVC_WORKTREES_PROVISION_CONCURRENCY", "0", 0] },
  { key: "spawn.attach", dflt: "always", file: "on-request", env: ["SVC_SPAWN_ATTACH", "always", "always"] },
  { key: "spawn.dedupe", dflt: "always", file: "on-request", env: ["SVC_SPAWN_DEDUPE", "always", "always"] },
  { key: "provenance.wrapGh", dflt: false, file: true, env: ["SVC_PROVENANCE_WRAP_GH", "false", false] },
  { key: "sessions.attentionDelaySec", dflt: 60, file: 30, env: ["SVC_SESSIONS_ATTENTION_DELAY_SEC", "5", 5] },
  { key: "tunnel.host", dflt: undefined, file: "wss://a.example", profile: "wss://b.example" },
  {
    key: "store.url",
    dflt: undefined,
    file: "postgres://a@db-a/svc",
    env: ["SVC_STORE_URL", "postgres://b@db-b/svc", "postgres://b@db-b/svc"],
    flag: ["store", "postgres://c@db-c/svc", "postgres://c@db-c/svc"],
  },
  { key: "store.keyFile", dflt: undefined, file: "/a/key", env: ["SVC_STORE_KEY_FILE", "/b/key", "/b/key"] },
  { key: "tunnel.autoconnect", dflt: false, file: true, profile: false },
  { key: "features.pty", dflt: false, file: true, profile: false },
  { key: "features.llmEndpoint", dflt: false, file: true, profile: false },
];

describe("resolveConfig: flag values are checked like the file's", () => {
  it.each([
    [{ bind: "" }, /^--bind "" is invalid: must not be empty/],
    [{ authToken: "" }, /^--auth-token \(value hidden\) is invalid/],
    [{ port: 65536 }, /^--port 65536 is invalid: must be 0\.\.65535, got 65536 \(it sets daemon\.port\)$/],
    [{ port: Number.NaN }, /^--port NaN is invalid/],
  ] as Array<[ConfigFlags, RegExp]>)("%j is a usage error naming the flag", (flags, why) => {
    let err: unknown;
    try {
      resolve({}, {}, flags);
    } catch (e) {
      err = e;
    }
    expect(SvcError.is(err) && err.code).toBe("usage");
    expect((err as Error).message).toMatch(why);
  });

  it("a secret flag is never quoted", () => {
    expect(() => resolve({}, {}, { authToken: 42 as unknown as string })).toThrow(/value hidden/);
    expect(() => resolve({}, {}, { authToken: 42 as unknown as string })).not.toThrow(/42/);
  });

  it("the token read by --auth-token-file sets daemon.authToken like --auth-token, its source named by that flag", () => {
    const r = resolve({ daemon: { authToken: "file-token" } }, {}, { authTokenFromFile: "from-token-file" });
    expect(r.effective.daemon.authToken).toBe("from-token-file");
    expect(formatSource(r.sources["daemon.authToken"]!)).toBe("flag --auth-token-file");
  });
});

describe("resolveConfig: flags > env > profile > file > default, key by key", () => {
  for (const row of ORDERED) {
    describe(row.key, () => {
      it("falls back to the default", () => {
        const r = resolve({});
        expect(getAt(r.effective, row.key.split("."))).toEqual(row.dflt);
        if (row.dflt !== undefined) expect(formatSource(r.sources[row.key]!)).toBe("default");
      });
      it("file beats default", () => {
        expect(valueAndSource(resolve(fileWith(row.key, row.file)), row.key)).toEqual({
          value: row.file,
          source: "config",
        });
      });
      if (row.profile !== undefined) {
        it("the active profile beats the file, and a missing field falls through", () => {
          const [section, field] = row.key.split(".");
          const file = {
            ...fileWith(row.key, row.file),
            profiles: { p: { [section!]: { [field!]: row.profile } }, empty: {} },
            activeProfile: "p",
          } as SvcConfigFile;
          expect(valueAndSource(resolve(file), row.key)).toEqual({ value: row.profile, source: "profile p" });
          expect(valueAndSource(resolve({ ...file, activeProfile: "empty" }), row.key)).toEqual({
            value: row.file,
            source: "config",
          });
        });
      }
      if (row.env) {
        const [name, text, parsed] = row.env;
        it(`env ${name} beats the file`, () => {
          expect(valueAndSource(resolve(fileWith(row.key, row.file), { [name]: text }), row.key)).toEqual({
            value: parsed,
            source: `env ${name}`,
          });
        });
      }
      if (row.flag) {
        const [flag, given, result] = row.flag;
        it(`the flag beats env, profile and file`, () => {
          const env = row.env ? { [row.env[0]]: row.env[1] } : {};
          const [section, field] = row.key.split(".");
          const file = {
            ...fileWith(row.key, row.file),
            ...(row.profile !== undefined
              ? { profiles: { p: { [section!]: { [field!]: row.profile } } }, activeProfile: "p" }
              : {}),
          } as SvcConfigFile;
          const r = resolve(file, env, { [flag]: given });
          expect(getAt(r.effective, row.key.split("."))).toEqual(result);
          expect(formatSource(r.sources[row.key]!)).toMatch(/^flag --/);
        });
      }
    });
  }

  it("covers every environment override SPEC.md names", () => {
    const covered = new Set(ORDERED.flatMap((r) => (r.env ? [r.env[0]] : [])));
    for (const o of ENV_OVERRIDES) if (o.name !== "EXT_JUDGE_API_KEY") expect(covered, o.name).toContain(o.name);
  });

  it("EXT_JUDGE_API_KEY is read after the file: the file's key wins, the env fills a gap", () => {
    const env = { EXT_JUDGE_API_KEY: "from-env" };
    expect(valueAndSource(resolve({ extJudge: { apiKey: "from-file" } }, env), "extJudge.apiKey")).toEqual({
      value: "from-file",
      source: "config",
    });
    expect(valueAndSource(resolve({}, env), "extJudge.apiKey")).toEqual({
      value: "from-env",
      source: "env EXT_JUDGE_API_KEY",
    });
    expect(resolve({}).effective.extJudge.apiKey).toBeUndefined();
  });

  it.each([
    ["SVC_TURN_STALL_AFTER_MS", "soon"],
    ["SVC_WORKTREES_ROOT", "relative/dir"],
    ["SVC_WORKTREES_ISOLATION", "sometimes"],
    ["SVC_WORKTREES_PROVISION_CONCURRENCY", "-2"],
    ["SVC_WORKTREES_PROVISION_CONCURRENCY", "1.5"],
    ["SVC_SPAWN_ATTACH", "never"],
    ["SVC_SPAWN_DEDUPE", "yes"],
    ["SVC_PROVENANCE_WRAP_GH", "maybe"],
    ["SVC_SESSIONS_ATTENTION_DELAY_SEC", "-1"],
  ])("an env value that does not parse is an error naming the variable: %s=%s", (name, text) => {
    const err = (() => {
      try {
        resolve({}, { [name]: text });
      } catch (e) {
        return e;
      }
    })();
    expect(SvcError.is(err)).toBe(true);
    expect((err as SvcError).code).toBe("config_invalid");
    expect((err as SvcError).message).toContain(name);
  });

  it("--profile naming a missing profile is fatal; a missing activeProfile warns and falls back", () => {
    const file: SvcConfigFile = {
      daemon: { port: 1 },
      profiles: { work: { daemon: { port: 2 } } },
      activeProfile: "gone",
    };
    expect(() => resolve(file, {}, { profile: "nope" })).toThrow(/--profile nope: no such profile.*work/);
    const r = resolve(file);
    expect(r.effective.daemon.port).toBe(1);
    expect(r.warnings.join()).toMatch(/activeProfile "gone" names no profile/);
    expect(resolve(file, {}, { profile: "work" }).effective.daemon.port).toBe(2);
  });

  it("profiles override only daemon, tunnel and features", () => {
    const file = {
      spawn: { attach: "on-request" },
      profiles: { p: { spawn: { attach: "always" }, daemon: { bind: "0.0.0.0" } } },
      activeProfile: "p",
    } as SvcConfigFile;
    const r = resolve(file);
    expect(r.effective.spawn.attach).toBe("on-request");
    expect(r.effective.daemon.bind).toBe("0.0.0.0");
    expect(r.profile).toBe("p");
  });

  it("home-relative paths: worktrees.root and sessions.eventsDir", () => {
    expect(resolve({}).effective.sessions.eventsDir).toBe(join(HOME, "sessions"));
    expect(resolve({ sessions: { eventsDir: "transcripts" } }).effective.sessions.eventsDir).toBe(
      join(HOME, "transcripts"),
    );
    expect(resolve({ sessions: { eventsDir: "/abs/ev" } }).effective.sessions.eventsDir).toBe("/abs/ev");
    expect(resolve({ sessions: { eventsDir: "~/ev" } }).effective.sessions.eventsDir).toBe(join(homedir(), "ev"));
    expect(resolve({ worktrees: { root: "~/wt" } }).effective.worktrees.root).toBe(join(homedir(), "wt"));
    expect(resolveConfig({}, { SVC_HOME: "/other" }).effective.worktrees.root).toBe("/other/worktrees");
  });

  it("provisionConcurrencyByRepo expands ~/", () => {
    const r = resolve({ worktrees: { provisionConcurrencyByRepo: { "~/src/mono": 1, api: 3 } } });
    expect(r.effective.worktrees.provisionConcurrencyByRepo).toEqual({ [join(homedir(), "src/mono")]: 1, api: 3 });
  });

  it('pairing: absent = hosted default with autoconnect; "" = opt-out without autoconnect', () => {
    const d = resolve({}).effective.pairing;
    expect(d.rendezvous).toMatch(/^wss:\/\//);
    expect(d.autoconnect).toBe(true);
    expect(resolve({ pairing: { rendezvous: "" } }).effective.pairing).toMatchObject({
      rendezvous: "",
      autoconnect: false,
    });
    expect(resolve({ pairing: { rendezvous: "", autoconnect: true } }).effective.pairing.autoconnect).toBe(true);
    expect(resolve({ pairing: { rendezvous: "wss://b.example" } }).effective.pairing).toMatchObject({
      rendezvous: "wss://b.example",
      autoconnect: true,
    });
  });

  it("every key of the configuration guide's full example resolves from the file (or the profile it selects)", async () => {
    const { readFile } = await import("node:fs/promises");
    const { sectionOf } = await import("../../support/readme.js");
    const { REPO_ROOT } = await import("../../support/paths.js");
    const text = sectionOf(await readFile(join(REPO_ROOT, "docs/configuration.md"), "utf8"), "config-example");
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(text)![1]!) as SvcConfigFile;
    const r = resolve(example);
    const fromProfile = new Set(["daemon.port", "tunnel.autoconnect", "features.llmEndpoint"]);
    const leaves = (v: unknown, at: string[]): string[] =>
      typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length > 0
        ? Object.entries(v).flatMap(([k, c]) => leaves(c, [...at, k]))
        : [at.join(".")];
    const keys = leaves(example, []).filter((k) => !k.startsWith("profiles.") && k !== "activeProfile");
    expect(keys.length).toBeGreaterThan(60);
    for (const key of keys)
      expect.soft(formatSource(r.sources[key]!), key).toBe(fromProfile.has(key) ? "profile work" : "config");
  });

  it("keeps unknown keys and marks file values as config", () => {
    const r = resolve({ daemon: { port: 1, future: { x: 1 } }, brandNew: true } as SvcConfigFile);
    expect((r.effective as unknown as { brandNew: boolean }).brandNew).toBe(true);
    expect(formatSource(r.sources["daemon.future.x"]!)).toBe("config");
    expect(formatSource(r.sources["daemon.bind"]!)).toBe("default");
  });
});
