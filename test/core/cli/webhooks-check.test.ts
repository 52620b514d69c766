import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../../../core/cli/webhooks/check.js";
import { makeTempHome, runCli } from "../../support/cli.js";
import { tableResolver } from "../../support/https-receiver.js";

describe("checkWebhookUrl (in process, table resolver)", () => {
  const resolver = tableResolver({
    "mixed.example": ["93.184.216.34", "10.0.0.7"],
    "public.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "nat64.example": ["64:ff9b::a9fe:a9fe"],
  });

  it("blocks a name with one public and one private answer and names the range of each", async () => {
    const r = await checkWebhookUrl("https://mixed.example/hook?token=x", { resolver, allowSubnets: [] });
    expect(r).toMatchObject({ host: "mixed.example", allowed: false, failure: "private_target" });
    expect(r.addresses.map((a) => [a.address, a.allowed, a.range?.cidr ?? null])).toEqual([
      ["93.184.216.34", true, null],
      ["10.0.0.7", false, "10.0.0.0/8"],
    ]);
    expect(r.reason).toContain("10.0.0.0/8 Private-Use");
    expect(r.reason).toContain("1 of 2");
    expect(JSON.stringify(r)).not.toContain("token");
  });

  it("allows a name whose answers are all global", async () => {
    const r = await checkWebhookUrl("https://public.example/", { resolver, allowSubnets: [] });
    expect(r.allowed).toBe(true);
    expect(r.addresses).toHaveLength(2);
  });

  it("names the embedded IPv4 of a NAT64 answer", async () => {
    const r = await checkWebhookUrl("https://nat64.example/", { resolver, allowSubnets: [] });
    expect(r.allowed).toBe(false);
    expect(r.addresses[0]!.embedded).toMatchObject({ address: "169.254.169.254", range: { cidr: "169.254.0.0/16" } });
  });

  it("allowSubnets exempts private_target only", async () => {
    const exempt = await checkWebhookUrl("https://mixed.example/", { resolver, allowSubnets: ["10.0.0.0/8"] });
    expect(exempt.allowed).toBe(true);
    expect(exempt.addresses[1]!.exemptedBy).toBe("10.0.0.0/8");
    const http = await checkWebhookUrl("http://mixed.example/", { resolver, allowSubnets: ["10.0.0.0/8"] });
    expect(http).toMatchObject({ allowed: false, failure: "non_https" });
  });

  it("reports a name that does not resolve as blocked (connect)", async () => {
    const r = await checkWebhookUrl("https://nowhere.example/", { resolver, allowSubnets: [] });
    expect(r).toMatchObject({ allowed: false, failure: "connect", addresses: [] });
  });
});

describe("svc webhooks check (real binary)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let listener: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    ({ home, cleanup } = await makeTempHome());
    listener = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => listener.close(() => r()));
    await cleanup();
  });

  it("exits 1 for loopback and prints the address, its range and the verdict", async () => {
    const res = await runCli(["webhooks", "check", `https://127.0.0.1:${port}/hook`], { home });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("127.0.0.1");
    expect(res.stdout).toContain("127.0.0.0/8 Loopback (RFC 1122)");
    expect(res.stdout).toMatch(/blocked \(private_target\)/);
  });

  it("exits 0 for a global address literal, with --json", async () => {
    const res = await runCli(["webhooks", "check", "https://8.8.8.8/hook", "--json"], { home });
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toMatchObject({ host: "8.8.8.8", allowed: true, failure: null, allowSubnets: [] });
    expect(report.addresses[0]).toMatchObject({ address: "8.8.8.8", family: 4, range: null, allowed: true });
  });

  it("exits 1 for http, 2 for a URL that does not parse", async () => {
    const http = await runCli(["webhooks", "check", "http://8.8.8.8/"], { home });
    expect(http.code).toBe(1);
    expect(http.stdout).toContain("non_https");
    const bad = await runCli(["webhooks", "check", "not a url"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a URL");
    expect((await runCli(["webhooks", "check"], { home })).code).toBe(2);
  });

  it("respects webhooks.allowSubnets from config.json and never connects", async () => {
    const { home: h2, cleanup: c2 } = await makeTempHome();
    try {
      await writeFile(
        join(h2, "config.json"),
        JSON.stringify({ webhooks: { allowSubnets: ["127.0.0.0/8", "::1/128"] } }),
      );
      const res = await runCli(["webhooks", "check", `https://localhost:${port}/hook`], { home: h2 });
      expect(res.code).toBe(0);
      expect(res.stdout).toContain("allowed (webhooks.allowSubnets 127.0.0.0/8)");
      const json = await runCli(["webhooks", "check", "--json", `https://127.0.0.1:${port}/`], { home: h2 });
      expect(JSON.parse(json.stdout)).toMatchObject({ allowed: true, allowSubnets: ["127.0.0.0/8", "::1/128"] });
      expect(connections).toBe(0);
    } finally {
      await c2();
    }
  });

  it("has --help", async () => {
    const res = await runCli(["webhooks", "check", "--help"], { home });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("--json");
  });
});
