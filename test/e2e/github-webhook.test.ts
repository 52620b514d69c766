import { readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signBody } from "../../plugins/webhook-provider/signature.js";
import { useDaemonProcess } from "../support/cli.js";
import { eventStream, fakeGhEnv, mcpClient } from "./github-helpers.js";

const SECRET = "e2e-webhook-secret-3f9c1a7b5d";
const BASE = "https://svc.example.com";
const payload = (name: string) =>
  readFileSync(new URL(`../plugins/github-common/payloads/${name}.json`, import.meta.url), "utf8");

describe("e2e: signed GitHub webhooks delivered to a real daemon", () => {
  let gh: Awaited<ReturnType<typeof fakeGhEnv>>;
  const fx = useDaemonProcess({
    setup: async () => {
      gh = await fakeGhEnv("pr-42");
      return { env: gh.env };
    },
  });

  const deliver = (
    body: string,
    event: string,
    delivery: string,
    signature: string | undefined = signBody(body, SECRET),
  ) =>
    fetch(`${fx.daemon.baseUrl}/providers/webhook/github`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/e2e",
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-forwarded-for": "140.82.115.1",
        ...(signature ? { "x-hub-signature-256": signature } : {}),
      },
      body,
    });

  it("refuses deliveries before a secret is set up", async () => {
    const res = await deliver(payload("push.main"), "push", "d-early");
    expect(res.status).toBe(503);
  });

  it("setup_sentinel_provider stores the secret 0600 in credentials.json and never shows it back", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    const out = await mcp.json("setup_sentinel_provider", {
      provider: "webhook",
      settings: { secret: SECRET, publicBaseUrl: BASE },
    });
    expect(out).toMatchObject({
      provider: "webhook",
      configured: { secretSet: true, publicBaseUrl: BASE, hookUrl: `${BASE}/providers/webhook/github` },
    });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    const file = join(fx.home, "credentials.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toContain(SECRET);
    const adapters = await mcp.json("list_sentinel_adapters");
    expect(JSON.stringify(adapters)).not.toContain(SECRET);
    expect(adapters.providers.find((p: { kind: string }) => p.kind === "webhook").readiness).toMatchObject({
      ready: true,
      secretSet: true,
    });
    await mcp.close();
  });

  it("matches signed deliveries to the right sentinels, drops a redelivery, refuses bad signatures, and manages hooks by reference count", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    const stream = await eventStream(fx.daemon.baseUrl);
    const pr = await mcp.json("sentinel_watch", {
      subject: "github:Acme-Org/API#42",
      provider: "webhook",
      sessionId: "ses_wh_pr",
    });
    const created = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "github:acme-org/api", types: ["github.push.*"] }],
        until: { kind: "never" },
        provider: "webhook",
        target: { kind: "session", sessionId: "ses_wh_repo" },
      }),
    });
    expect(created.status).toBe(201);
    const repo = (await created.json()) as { id: string };
    const other = await mcp.json("sentinel_watch", {
      subject: "github:other/repo",
      provider: "webhook",
      until: { kind: "never" },
      sessionId: "ses_wh_other",
    });

    const hookCalls = async () =>
      (await gh.calls())
        .filter((c) => c.cmd === "api" && /\/hooks/.test(c.path))
        .map((c) => `${c.method} ${c.path.split("?")[0]}`);
    expect((await hookCalls()).filter((c) => c.startsWith("POST"))).toEqual([
      "POST repos/acme-org/api/hooks",
      "POST repos/other/repo/hooks",
    ]);

    const prBody = payload("pull_request.closed-merged");
    const res = await deliver(prBody, "pull_request", "11111111-2222-3333-4444-555555555555");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      accepted: 1,
      eventId: "11111111-2222-3333-4444-555555555555",
      type: "github.pull_request.closed",
      matched: 1,
    });
    const push = await deliver(payload("push.main"), "push", "66666666-7777-8888-9999-000000000000");
    expect(await push.json()).toMatchObject({ matched: 1 });

    await stream.waitFor(() => stream.of("sentinel:matched").length === 2, "2 matched events");
    expect(stream.of("sentinel:matched").map((e) => [e.data.sentinelId, e.data.eventId, e.data.provider])).toEqual([
      [pr.id, "11111111-2222-3333-4444-555555555555", "webhook"],
      [repo.id, "66666666-7777-8888-9999-000000000000", "webhook"],
    ]);
    await stream.waitFor(() => stream.of("sentinel:ended").length === 1, "the PR sentinel to end on merge");
    expect(stream.of("sentinel:ended")[0]!.data).toMatchObject({ sentinelId: pr.id, reason: "subject_terminal" });

    const again = await deliver(payload("push.main"), "push", "66666666-7777-8888-9999-000000000000");
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true, accepted: 0 });
    const notGuid = await deliver(payload("push.main"), "push", "delivery-7");
    expect(notGuid.status).toBe(400);
    expect(((await notGuid.json()) as { error: { message: string } }).error.message).toMatch(
      /must be the delivery's GUID/,
    );
    const bad = await deliver(
      payload("push.main"),
      "push",
      "bad-1",
      signBody(payload("push.main"), "not-the-secret-at-all"),
    );
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const unsigned = await deliver(payload("push.main"), "push", "bad-2", "");
    expect(unsigned.status).toBe(401);
    const tampered = await deliver(
      payload("push.main").replace("octocat", "mallory"),
      "push",
      "bad-3",
      signBody(payload("push.main"), SECRET),
    );
    expect(tampered.status).toBe(401);
    await new Promise((r) => setTimeout(r, 100));
    expect(stream.of("sentinel:matched")).toHaveLength(2);
    expect(JSON.stringify(stream.events)).not.toContain(SECRET);

    // The expired PR sentinel released its reference; the REST sentinel still holds the hook.
    expect((await hookCalls()).filter((c) => c.startsWith("DELETE"))).toEqual([]);
    expect((await fx.daemon.fetch(`/sentinels/${repo.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await hookCalls()).filter((c) => c.startsWith("DELETE"))).toEqual(["DELETE repos/acme-org/api/hooks/7001"]);
    await mcp.json("sentinel_unwatch", { id: other.id });
    expect((await hookCalls()).filter((c) => c.startsWith("DELETE"))).toEqual([
      "DELETE repos/acme-org/api/hooks/7001",
      "DELETE repos/other/repo/hooks/7002",
    ]);
    expect(fx.daemon.logs()).not.toContain(SECRET);
    await stream.close();
    await mcp.close();
  });
  it("a signed delivery nesting deeper than the documented 64 levels is a 400, as every JSON body is", async () => {
    const deep = payload("push.main").replace(/^\{/, `{"extra":${"[".repeat(100_000)}${"]".repeat(100_000)},`);
    const res = await deliver(deep, "push", "12121212-3434-5656-7878-909090909090");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/deeper than 64 levels/);
    const form = `payload=${encodeURIComponent(deep)}`;
    const viaForm = await fetch(`${fx.daemon.baseUrl}/providers/webhook/github`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-github-event": "push",
        "x-github-delivery": "12121212-3434-5656-7878-909090909091",
        "x-hub-signature-256": signBody(form, SECRET),
      },
      body: form,
    });
    expect(viaForm.status).toBe(400);
  });
});
