import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../core/config/resolve.js";
import type { SvcConfigFile } from "../../../core/config/schema.js";
import { SvcError } from "../../../core/errors.js";
import { checkStoreFlag, chooseStore, storeOfConfig } from "../../../core/store/select.js";

const choose = (file: SvcConfigFile, env: NodeJS.ProcessEnv = {}, store?: string) =>
  storeOfConfig(resolveConfig(file, env, store === undefined ? {} : { store }, "/h"));

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return SvcError.is(err) ? err.code : "not an SvcError";
  }
  return undefined;
};

describe("choosing the store", () => {
  it("is the files when no store.url is set anywhere", () => {
    expect(choose({})).toEqual({ kind: "file" });
  });

  it("takes --store over SVC_STORE_URL over config.json store.url, and says which", () => {
    const file = { store: { url: "postgres://a@db-a/svc" } };
    const env = { SVC_STORE_URL: "postgresql://b@db-b/svc" };
    expect(choose(file)).toEqual({ kind: "postgres", url: "postgres://a@db-a/svc", from: "config.json store.url" });
    expect(choose(file, env)).toEqual({ kind: "postgres", url: env.SVC_STORE_URL, from: "env SVC_STORE_URL" });
    expect(choose(file, env, "postgres://c@db-c/svc")).toEqual({
      kind: "postgres",
      url: "postgres://c@db-c/svc",
      from: "flag --store",
    });
  });

  it.each([
    [
      "mysql://u@h/db",
      /^env SVC_STORE_URL is "mysql:\/\/u@h\/db", which is not a PostgreSQL URL \(scheme "mysql:"\); allowed: postgres:\/\//,
    ],
    ["db.example.com", /which is not a PostgreSQL URL \(no scheme\)/],
    ["postgres:db", /not a well-formed PostgreSQL URL/],
  ])("refuses %s with store_url_invalid, naming where it came from and what is allowed", (url, why) => {
    const err = (() => {
      try {
        choose({}, { SVC_STORE_URL: url });
      } catch (e) {
        return e as SvcError;
      }
    })();
    expect(err?.code).toBe("store_url_invalid");
    expect(err?.message).toMatch(why);
  });

  it("never shows a password of a refused URL", () => {
    const err = (() => {
      try {
        chooseStore("https://u:hunter2@h/db", { kind: "config" });
      } catch (e) {
        return e as SvcError;
      }
    })();
    expect(err?.message).toContain("config.json store.url");
    expect(err?.message).toContain("u:***@h");
    expect(err?.message).not.toContain("hunter2");
  });

  it("refuses a --store URL that carries a password, saying how to give it instead", () => {
    let err: SvcError | undefined;
    try {
      checkStoreFlag("postgres://svc:hunter2@db/svc");
    } catch (e) {
      err = e as SvcError;
    }
    expect(err?.code).toBe("store_url_invalid");
    expect(err?.message).toMatch(/PGPASSWORD.*~\/\.pgpass.*SVC_STORE_URL.*store\.url/);
    expect(err?.message).not.toContain("hunter2");
    expect(() => checkStoreFlag("postgres://svc@db:5433/svc")).not.toThrow();
    expect(codeOf(() => checkStoreFlag("redis://db"))).toBe("store_url_invalid");
  });

  it("property: any string is the team store, or store_url_invalid that never quotes a password", () => {
    const password = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/).map((p) => `pw${p}`);
    const odd = fc.oneof(
      fc.string(),
      fc.webUrl(),
      fc
        .tuple(fc.constantFrom("postgres", "postgresql", "POSTGRES", "pg", "http", ""), fc.string())
        .map(([s, rest]) => `${s}://${rest}`),
    );
    fc.assert(
      fc.property(odd, password, fc.boolean(), (url, pw, withPw) => {
        const u = withPw ? url.replace("://", `://user:${pw}@`) : url;
        try {
          const c = chooseStore(u, { kind: "env", name: "SVC_STORE_URL" });
          expect(c.kind).toBe("postgres");
          expect(/^postgres(ql)?:\/\//i.test(u)).toBe(true);
        } catch (err) {
          expect(SvcError.is(err) && err.code).toBe("store_url_invalid");
          if (withPw && u.includes(pw)) expect((err as Error).message).not.toContain(pw);
        }
        try {
          checkStoreFlag(u);
        } catch (err) {
          expect(SvcError.is(err) && err.code).toBe("store_url_invalid");
          if (withPw && u.includes(pw)) expect((err as Error).message).not.toContain(pw);
        }
      }),
      { numRuns: 200 },
    );
  });
});
