import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { builtinRedactor, secretsFloor, shortenPaths } from "../../../core/redaction/builtins.js";
import type { RedactionInput } from "../../../core/redaction/redaction.js";

const alnum = (min: number, max = 48) =>
  fc.string({
    unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
    minLength: min,
    maxLength: max,
  });
const upperNum = (n: number) =>
  fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), minLength: n, maxLength: n });
const b64url = (min: number) =>
  fc.string({
    unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
    minLength: min,
    maxLength: 40,
  });

/** One generator per secret shape: the full secret, as it would be planted in text. */
const SHAPES: Record<string, fc.Arbitrary<string>> = {
  anthropic: alnum(24).map((s) => `sk-ant-api03-${s}`),
  openai: alnum(20).map((s) => `sk-${s}`),
  openaiProject: alnum(20).map((s) => `sk-proj-${s}`),
  github: fc.tuple(fc.constantFrom("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), alnum(20, 36)).map(([p, s]) => p + s),
  githubPat: alnum(22).map((s) => `github_pat_11AB_${s}`),
  webhook: alnum(16).map((s) => `whsec_${s}`),
  vaultRef: alnum(16).map((s) => `swsec_${s}`),
  llmSession: alnum(48, 48).map((s) => `svc_llm_${s}`),
  aws: upperNum(16).map((s) => `AKIA${s}`),
  jwt: fc.tuple(b64url(8), b64url(8), b64url(8)).map(([a, b, c]) => `eyJ${a}.${b}.${c}`),
  pem: fc
    .base64String({ minLength: 40, maxLength: 120 })
    .map((b) => `-----BEGIN RSA PRIVATE KEY-----\n${b}\n-----END RSA PRIVATE KEY-----`),
};
/** Shapes whose secret is the part after a harmless lead that stays. */
const LED: Record<string, fc.Arbitrary<[lead: string, secret: string]>> = {
  bearer: alnum(12).map((s) => ["Authorization: Bearer ", `t0k${s}`]),
  keyValue: fc
    .tuple(
      fc.constantFrom("api_key=", "password: ", '"client_secret": "', "GH_TOKEN=", "X-Api-Key: ", "db.password="),
      alnum(10),
    )
    .map(([l, s]) => [l, `q${s}`]),
};

/** What may stand next to a secret: any text, then a character that does not glue onto it. */
const before = fc
  .tuple(fc.string({ maxLength: 40 }), fc.constantFrom(" ", "\n", "\t", '"', "'", "(", "[", ",", ":", "`", "<"))
  .map(([t, s]) => t + s);
const after = fc
  .tuple(fc.constantFrom(" ", "\n", '"', "'", ")", "]", ",", ";", "`", ">", ""), fc.string({ maxLength: 40 }))
  .map(([s, t]) => s + t);

const floor = secretsFloor([]);

describe("the secrets floor", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`no planted ${name} survives, whatever text surrounds it`, () => {
      fc.assert(fc.property(before, shape, after, (pre, secret, post) => !floor(pre + secret + post).includes(secret)));
    });
  }
  for (const [name, shape] of Object.entries(LED)) {
    it(`no planted ${name} value survives, whatever text surrounds it`, () => {
      fc.assert(
        fc.property(
          before,
          shape,
          after,
          (pre, [lead, secret], post) => !floor(pre + lead + secret + post).includes(secret),
        ),
      );
    });
  }

  it("replaces every held value exactly, glued to anything", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }),
        fc.string({ minLength: 8, maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        (pre, held, post) => {
          return !secretsFloor([held])(pre + held + post + held).includes(held);
        },
      ),
    );
  });

  it("keeps ordinary text: counts, words with sk- inside, short prefixes", () => {
    const text = "task-management-thing-long-name used inputTokens: 12, max_tokens=4096 and token: 12; see whsec_ docs";
    expect(floor(text)).toBe(text);
    expect(floor("Authorization: Bearer abcdefgh1234")).toBe("Authorization: Bearer [redacted]");
    expect(floor("key=AKIAABCDEFGHIJKLMNOP")).toBe("key=[redacted]");
  });
});

const input = (text: string, content: boolean, sessionId?: string): RedactionInput => ({
  text,
  key: "k",
  content,
  surface: "judge",
  ...(sessionId ? { sessionId } : {}),
});

describe("built-in redactors", () => {
  it("metadata drops every content input and keeps metadata", () => {
    const metadata = builtinRedactor("metadata", {});
    fc.assert(
      fc.property(
        fc.string(),
        (text) => metadata(input(text, true)) === undefined && metadata(input(text, false)) === text,
      ),
    );
  });

  it("secrets keeps the text for the floor to clean", () => {
    expect(builtinRedactor("secrets", {})(input("hello", true))).toBe("hello");
  });

  it("paths shortens the workspace, $SVC_HOME and the home directory, longest first", () => {
    const paths = builtinRedactor("paths", {
      home: "/home/alice",
      svcHome: "/home/alice/.svc",
      workspaceOf: (id) => (id === "ses_1" ? "/home/alice/repo" : undefined),
    });
    expect(
      paths(
        input(
          "edit /home/alice/repo/src/x.ts, log in /home/alice/.svc/logs and /home/alice/notes; /home/alicex stays",
          true,
          "ses_1",
        ),
      ),
    ).toBe("edit <workspace>/src/x.ts, log in <svc-home>/logs and ~/notes; /home/alicex stays");
    expect(paths(input("/home/alice/repo/a", true, "ses_other"))).toBe("~/repo/a");
  });

  it("shortenPaths leaves a longer name that starts the same", () => {
    expect(shortenPaths("/srv/app /srv/application", [["/srv/app", "<workspace>"]])).toBe(
      "<workspace> /srv/application",
    );
  });
});
