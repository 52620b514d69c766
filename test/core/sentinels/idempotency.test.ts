import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../../core/runtime/canonical-json.js";
import {
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_WINDOW_MS,
  checkIdempotencyKey,
} from "../../../core/sentinels/idempotency.js";
import { RequestFingerprints } from "../../../core/sentinels/request-fingerprint.js";
import type { CredentialStore } from "../../../core/plugin-api/context.js";
import { makeTempHome } from "../../support/cli.js";
import { spec, startHarness, type Harness } from "./harness.js";

let home: string;
let cleanup: () => Promise<void>;
let h: Harness;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-sentinel-idem-"));
  h = await startHarness(home);
});
afterEach(async () => {
  await h.stop();
  await cleanup();
});

const stored = async () =>
  JSON.parse(await readFile(join(home, "sentinels.json"), "utf8")).sentinels as Array<Record<string, any>>;
const key = (k: string) => ({ idempotencyKey: k });

describe("idempotent creates", () => {
  it("the same key and request twice make one sentinel; the second answer has the same id", async () => {
    const first = await h.engine.create(spec("repo:a"), "token:boot", key("job-1"));
    const second = await h.engine.create(spec("repo:a"), "token:boot", key("job-1"));
    expect(second.id).toBe(first.id);
    expect(second).toEqual(first);
    expect((await h.engine.list()).map((s) => s.id)).toEqual([first.id]);
    expect(h.rec.hooks.filter((x) => x.startsWith("create:"))).toHaveLength(1);
    const [rec] = await stored();
    expect(rec!.idempotency).toEqual({
      key: "job-1",
      principal: "token:boot",
      fingerprint: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/),
      at: first.createdAt,
    });
    expect(first).not.toHaveProperty("idempotency");
  });

  it("the same key with another request is refused with idempotency_key_reused (422) and creates nothing", async () => {
    const first = await h.engine.create(spec("repo:a"), "token:boot", key("job-1"));
    const err = await h.engine.create(spec("repo:b"), "token:boot", key("job-1")).catch((e) => e);
    expect(err).toMatchObject({ code: "idempotency_key_reused", details: { sentinelId: first.id } });
    expect(err.message).toMatch(/"job-1" already created sentinel snt_.* from a different request/);
    expect((await h.engine.list()).map((s) => s.id)).toEqual([first.id]);
  });

  it("key order in the request does not matter (canonical JSON)", async () => {
    const a = await h.engine.create(
      {
        until: { kind: "never" },
        provider: "agentpush",
        match: [{ subject: "x" }],
        target: { name: "t1", kind: "test" },
      },
      "loopback",
      key("k"),
    );
    const b = await h.engine.create(spec("x"), "loopback", key("k"));
    expect(b.id).toBe(a.id);
  });

  it("keys are scoped per principal: another caller's same key makes its own sentinel", async () => {
    const mine = await h.engine.create(spec("repo:a"), "token:boot", key("shared"));
    const theirs = await h.engine.create(spec("repo:a"), "loopback", key("shared"));
    expect(theirs.id).not.toBe(mine.id);
    // and a different body under the other principal is no conflict either
    await expect(h.engine.create(spec("repo:z"), "token:stable", key("shared"))).resolves.toMatchObject({
      status: "active",
    });
    expect(await h.engine.list()).toHaveLength(3);
  });

  it("after 24 hours the key matches nothing: a new sentinel is made (fake clock)", async () => {
    const first = await h.engine.create(spec("repo:a"), "loopback", key("daily"));
    h.clock.advance(IDEMPOTENCY_WINDOW_MS - 1);
    expect((await h.engine.create(spec("repo:a"), "loopback", key("daily"))).id).toBe(first.id);
    h.clock.advance(1);
    const next = await h.engine.create(spec("repo:a"), "loopback", key("daily"));
    expect(next.id).not.toBe(first.id);
    // the new sentinel now owns the key, also for a different body's refusal
    expect((await h.engine.create(spec("repo:a"), "loopback", key("daily"))).id).toBe(next.id);
    await expect(h.engine.create(spec("repo:b"), "loopback", key("daily"))).rejects.toMatchObject({
      code: "idempotency_key_reused",
      details: { sentinelId: next.id },
    });
  });

  it("concurrent creates with the same key make one sentinel and all get its id", async () => {
    const all = await Promise.all(
      Array.from({ length: 20 }, () => h.engine.create(spec("repo:a"), "loopback", key("burst"))),
    );
    expect(new Set(all.map((p) => p.id)).size).toBe(1);
    expect(await stored()).toHaveLength(1);
  });

  it("a failed first attempt stores no key: the retry creates", async () => {
    await expect(
      h.engine.create(spec("a", { target: { kind: "test", name: "refuse" } }), "loopback", key("k1")),
    ).rejects.toThrow("refused by target");
    const retry = await h.engine.create(spec("a"), "loopback", key("k1"));
    expect(retry.status).toBe("active");
  });

  it("the key survives a restart (it is stored with the sentinel) and is freed when the sentinel is removed", async () => {
    const first = await h.engine.create(spec("repo:a"), "loopback", key("persist"));
    await h.stop();
    h = await startHarness(home, { clock: h.clock, rec: h.rec });
    expect((await h.engine.create(spec("repo:a"), "loopback", key("persist"))).id).toBe(first.id);
    await expect(h.engine.create(spec("repo:b"), "loopback", key("persist"))).rejects.toMatchObject({
      code: "idempotency_key_reused",
    });
    await h.engine.remove(first.id);
    const again = await h.engine.create(spec("repo:b"), "loopback", key("persist"));
    expect(again.id).not.toBe(first.id);
  });

  it("never stores the request or a plain hash of it: a secret in the body leaves no trace", async () => {
    const body = spec("repo:a", {
      target: { kind: "test", name: "t1", secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0" },
    });
    await h.engine.create(body, "loopback", key("with-secret"));
    const text = await readFile(join(home, "sentinels.json"), "utf8");
    expect(text).not.toContain("whsec_");
    const plain = createHash("sha256").update(canonicalJson(body)).digest("hex");
    expect(text).not.toContain(plain);
    // the HMAC key lives in credentials.json (0600), not beside the fingerprints
    expect(text).not.toContain(
      JSON.parse(await readFile(join(home, "credentials.json"), "utf8")).values.sentinels["idempotency-hmac-key"],
    );
  });

  it("refuses a bad key with invalid_input naming what is wrong, before anything is created", async () => {
    for (const [bad, why] of [
      ["", /must not be empty/],
      ["x".repeat(IDEMPOTENCY_KEY_MAX + 1), /256 characters long; at most 255/],
      ["tab\there", /printable ASCII/],
      [" padded", /printable ASCII/],
      ["naïve", /printable ASCII/],
    ] as const) {
      const err = await h.engine.create(spec("a"), "loopback", key(bad)).catch((e) => e);
      expect(err).toMatchObject({ code: "invalid_input", details: [{ path: "idempotencyKey" }] });
      expect(err.message).toMatch(why);
    }
    expect(await h.engine.list()).toEqual([]);
  });

  it("100 concurrent creates without keys are all answered and all stored", async () => {
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => h.engine.create(spec(`job:${i}`), "loopback")));
    expect(new Set(all.map((p) => p.id)).size).toBe(100);
    expect((await stored()).map((r) => r.id).sort()).toEqual(all.map((p) => p.id).sort());
  });
});

describe("the key rule and the fingerprint", () => {
  it("accepts exactly 1-255 printable ASCII characters without a space at either end", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0x17f }), { maxLength: 300 }).map((cs) => String.fromCharCode(...cs)),
        (s) => {
          const ok =
            s.length >= 1 && s.length <= 255 && /^[\x20-\x7e]+$/.test(s) && !s.startsWith(" ") && !s.endsWith(" ");
          let accepted = true;
          try {
            checkIdempotencyKey(s);
          } catch {
            accepted = false;
          }
          return accepted === ok;
        },
      ),
    );
    expect(checkIdempotencyKey("a b")).toBe("a b");
  });

  it("is the same for any key order, differs for any other value, and depends on the home's key", async () => {
    const memory = (): CredentialStore => {
      const m = new Map<string, string>();
      return {
        get: async (ns, k) => m.get(`${ns}/${k}`),
        set: async (ns, k, v) => void m.set(`${ns}/${k}`, v),
        delete: async (ns, k) => void m.delete(`${ns}/${k}`),
        has: async (ns, k) => m.has(`${ns}/${k}`),
      };
    };
    const one = new RequestFingerprints(memory());
    const other = new RequestFingerprints(memory());
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.jsonValue(), async (a, b) => {
        expect(await one.of(reversed(a))).toBe(await one.of(a));
        if (canonicalJson(a) !== canonicalJson(b)) expect(await one.of(a)).not.toBe(await one.of(b));
        expect(await other.of(a)).not.toBe(await one.of(a));
      }),
      { numRuns: 200 },
    );
  });
});
