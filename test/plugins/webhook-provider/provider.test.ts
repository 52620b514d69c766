import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { describe, expect, it } from "vitest";
import type { RouteDef, RouteRequest } from "../../../core/plugin-api/index.js";
import webhook, { createWebhookProvider } from "../../../plugins/webhook-provider/index.js";
import { signBody, verifySignature } from "../../../plugins/webhook-provider/signature.js";
import { MemoryCredentials, RecordingIngress, fakeGh, pluginContext, sentinel } from "../local-gh/helpers.js";

const SECRET = "It's a Secret to Everybody";
const BASE = "https://svc.example.com";

async function setup(settings: Record<string, string> = {}) {
  const fake = await fakeGh("pr-42");
  const creds = new MemoryCredentials();
  for (const [k, v] of Object.entries(settings)) creds.values.set(`provider-webhook/${k}`, v);
  const ingress = new RecordingIngress();
  const routes: RouteDef[] = [];
  const ctx = pluginContext({
    credentials: creds,
    sentinels: ingress,
    routes: { add: (r: RouteDef) => routes.push(r) },
  });
  const provider = createWebhookProvider(ctx, fake.gh);
  await provider.start!();
  const hookCalls = async () => (await fake.calls()).filter((c) => c.cmd === "api").map((c) => `${c.method} ${c.path}`);
  return { ...fake, creds, ingress, routes, provider, ctx, hookCalls };
}

function deliver(route: RouteDef, body: string, headers: IncomingHttpHeaders) {
  const req = {
    method: "POST",
    path: route.path,
    params: {},
    query: new URLSearchParams(),
    headers,
    body: Buffer.from(body),
    principal: "anonymous",
    remoteAddress: "203.0.113.1",
  };
  return route.handler(req as unknown as RouteRequest);
}

const payload = readFileSync(
  new URL("../github-common/payloads/pull_request.closed-merged.json", import.meta.url),
  "utf8",
);

describe("signature", () => {
  it("matches GitHub's documented example and refuses tampering", () => {
    // Example from GitHub's "Validating webhook deliveries" documentation.
    expect(signBody("Hello, World!", SECRET)).toBe(
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
    expect(
      verifySignature(
        Buffer.from("Hello, World!"),
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        SECRET,
      ),
    ).toBe(true);
    expect(verifySignature(Buffer.from("Hello, World?"), signBody("Hello, World!", SECRET), SECRET)).toBe(false);
    expect(verifySignature(Buffer.from("x"), "sha1=abc", SECRET)).toBe(false);
    expect(verifySignature(Buffer.from("x"), undefined, SECRET)).toBe(false);
  });
});

describe("webhook provider ingress", () => {
  it("is a provider plugin of kind webhook and adds its route at start", async () => {
    expect(webhook).toMatchObject({ type: "provider", kind: "webhook" });
    const t = await setup({ secret: SECRET });
    expect(t.routes.map((r) => [r.method, r.path, r.auth])).toEqual([["POST", "/providers/webhook/github", "open"]]);
  });

  it("ingests a signed delivery with the delivery id as the event id", async () => {
    const t = await setup({ secret: SECRET });
    const out = await deliver(t.routes[0]!, payload, {
      "x-github-event": "pull_request",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": signBody(payload, SECRET),
      "content-type": "application/json",
    });
    expect(out).toMatchObject({
      status: 200,
      body: { accepted: 1, eventId: "72d3162e-cc78-11e3-81ab-4c9367dc0958", type: "github.pull_request.closed" },
    });
    expect(t.ingress.ingested[0]!.subjects).toEqual(["github:acme-org/api", "github:acme-org/api#42"]);
  });

  it.each([
    ["unsigned", undefined, /unsigned/],
    ["signed with another secret", signBody(payload, "another secret entirely"), /bad signature/],
    ["malformed", "sha256=zz", /bad signature/],
  ])("refuses a %s delivery with 401 and ingests nothing", async (_what, signature, message) => {
    const t = await setup({ secret: SECRET });
    const headers: IncomingHttpHeaders = {
      "x-github-event": "pull_request",
      "x-github-delivery": "00000000-0000-4000-8000-000000000001",
    };
    if (signature) headers["x-hub-signature-256"] = signature;
    await expect(deliver(t.routes[0]!, payload, headers)).rejects.toMatchObject({
      code: "unauthorized",
      message: expect.stringMatching(message),
    });
    expect(t.ingress.ingested).toEqual([]);
  });

  it("refuses every delivery while no secret is set (503), answers ping, and ignores unmapped events", async () => {
    const none = await setup();
    await expect(
      deliver(none.routes[0]!, payload, { "x-hub-signature-256": signBody(payload, SECRET) }),
    ).rejects.toMatchObject({ code: "unavailable" });
    const t = await setup({ secret: SECRET });
    const sign = (b: string, event: string) => ({
      "x-github-event": event,
      "x-github-delivery": "00000000-0000-4000-8000-000000000002",
      "x-hub-signature-256": signBody(b, SECRET),
    });
    expect(await deliver(t.routes[0]!, "{}", sign("{}", "ping"))).toMatchObject({ status: 200, body: { pong: true } });
    expect(await deliver(t.routes[0]!, "[]", sign("[]", "star"))).toMatchObject({ status: 202, body: { accepted: 0 } });
    await expect(deliver(t.routes[0]!, "not json", sign("not json", "push"))).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(t.ingress.ingested).toEqual([]);
  });
});

describe("webhook provider settings cache", () => {
  it("reads the settings once for any number of deliveries, and again after setup changes them", async () => {
    const t = await setup({ secret: SECRET });
    let reads = 0;
    const get = t.creds.get.bind(t.creds);
    t.creds.get = async (ns: string, key: string) => {
      reads++;
      return get(ns, key);
    };
    const headers = (b: string, secret: string) => ({
      "x-github-event": "pull_request",
      "x-github-delivery": "00000000-0000-4000-8000-000000000003",
      "x-hub-signature-256": signBody(b, secret),
      "content-type": "application/json",
    });
    for (let i = 0; i < 3; i++) await deliver(t.routes[0]!, payload, headers(payload, SECRET));
    expect(reads).toBe(2); // secret and publicBaseUrl, once
    const next = "another secret, long enough";
    await t.provider.configure!({ secret: next });
    await expect(deliver(t.routes[0]!, payload, headers(payload, SECRET))).rejects.toMatchObject({
      code: "unauthorized",
    });
    expect(await deliver(t.routes[0]!, payload, headers(payload, next))).toMatchObject({ status: 200 });
  });
});

describe("webhook provider setup, readiness and repository hooks", () => {
  it("setup stores the secret through credentials and never shows it back; readiness says what is missing", async () => {
    const t = await setup();
    const before = await t.provider.readiness();
    expect(before).toMatchObject({ ready: false, secretSet: false, publicBaseUrl: null });
    expect(before.detail).toMatch(/secret.*public base URL/);
    const out = await t.provider.configure!({ secret: SECRET, publicBaseUrl: `${BASE}/` });
    expect(out).toEqual({
      secretSet: true,
      publicBaseUrl: BASE,
      hookUrl: `${BASE}/providers/webhook/github`,
      registeredHooks: [],
    });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(t.creds.values.get("provider-webhook/secret")).toBe(SECRET);
    const after = await t.provider.readiness();
    expect(after).toMatchObject({ ready: true, secretSet: true, publicBaseUrl: BASE });
    expect(JSON.stringify(after)).not.toContain(SECRET);
    await expect(t.provider.configure!({ secret: "short" })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(t.provider.configure!({ publicBaseUrl: "http://insecure.example" })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(t.provider.configure!({ apiKey: "x" })).rejects.toThrow(/allowed: secret, publicBaseUrl/);
  });

  it("registers one hook per repository, reference-counted across sentinels, removed with the last one", async () => {
    const t = await setup({ secret: SECRET, publicBaseUrl: BASE });
    const a = sentinel("snt_a", ["github:acme/api#42"], 0, "webhook");
    const b = sentinel("snt_b", ["github:acme/api", "github:acme/web#1"], 0, "webhook");
    await t.provider.watch!(a);
    await t.provider.watch!(b);
    await t.provider.watch!(a); // a boot-time re-watch counts once
    expect(await t.hookCalls()).toEqual([
      "GET repos/acme/api/hooks?per_page=100",
      "POST repos/acme/api/hooks",
      "GET repos/acme/web/hooks?per_page=100",
      "POST repos/acme/web/hooks",
    ]);
    const post = (await t.calls()).find((c) => c.method === "POST")!;
    expect(post.body).toMatchObject({
      name: "web",
      active: true,
      config: { url: `${BASE}/providers/webhook/github`, content_type: "json", secret: SECRET },
    });
    expect(post.body.events).toEqual(["*"]);
    expect(post.headers).toEqual({});
    await t.provider.unwatch!(a);
    expect(await t.hookCalls()).toHaveLength(4);
    await t.provider.unwatch!(b);
    expect((await t.hookCalls()).slice(4)).toEqual([
      "DELETE repos/acme/api/hooks/7001",
      "DELETE repos/acme/web/hooks/7002",
    ]);
    expect((await t.provider.readiness()).registeredHooks).toEqual([]);
  });

  it("reuses a hook already pointing at our URL (after a restart) instead of registering a duplicate", async () => {
    const t = await setup({ secret: SECRET, publicBaseUrl: BASE });
    await t.provider.watch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    const restarted = createWebhookProvider(t.ctx, t.gh);
    await restarted.watch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    expect((await t.hookCalls()).filter((c) => c.startsWith("POST"))).toHaveLength(1);
    await restarted.unwatch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    expect((await t.hookCalls()).at(-1)).toBe("DELETE repos/acme/api/hooks/7001");
  });

  it("a reused hook gets the current secret, so a secret changed while the daemon was down does not refuse every delivery", async () => {
    const t = await setup({ secret: SECRET, publicBaseUrl: BASE });
    await t.provider.watch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    const next = "the secret after the restart";
    t.creds.values.set("provider-webhook/secret", next);
    const restarted = createWebhookProvider(t.ctx, t.gh);
    await restarted.watch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    expect((await t.hookCalls()).slice(2)).toEqual([
      "GET repos/acme/api/hooks?per_page=100",
      "PATCH repos/acme/api/hooks/7001",
    ]);
    const patch = (await t.calls()).find((c) => c.method === "PATCH")!;
    expect(patch.body).toMatchObject({
      active: true,
      config: { url: `${BASE}/providers/webhook/github`, secret: next },
    });
  });

  it("without a public base URL nothing is registered; setting one later registers hooks for watched repositories", async () => {
    const t = await setup({ secret: SECRET });
    await t.provider.watch!(sentinel("snt_a", ["github:acme/api#42"], 0, "webhook"));
    expect(await t.hookCalls()).toEqual([]);
    const out = await t.provider.configure!({ publicBaseUrl: BASE });
    expect(out.registeredHooks).toEqual(["acme/api"]);
    expect(await t.hookCalls()).toEqual(["GET repos/acme/api/hooks?per_page=100", "POST repos/acme/api/hooks"]);
  });

  it("a failing hook call is reported in readiness, not thrown into sentinel creation", async () => {
    const t = await setup({ secret: SECRET, publicBaseUrl: BASE });
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      `${t.dir}/api.json`,
      JSON.stringify({ "GET repos/acme/api/hooks?per_page=100": { status: 404, body: { message: "Not Found" } } }),
    );
    await t.provider.watch!(sentinel("snt_a", ["github:acme/api"], 0, "webhook"));
    expect((await t.provider.readiness()).hookErrors).toEqual({ "acme/api": expect.stringMatching(/404/) });
  });
});
