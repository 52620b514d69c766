/**
 * Issue 28's webhook rough edges, through the real CLI and a real daemon: the allowSubnets fix in
 * `private_target` / `ssrf_blocked` errors and in `webhooks check`; `tls_untrusted` for a
 * certificate Node does not accept (a challenge, a delivery); "verified (cached)"; `webhooks ls/rm`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { startReceiver, type Receiver } from "../support/https-receiver.js";
import { startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

const SECRET = `whsec_${Buffer.alloc(32, 41).toString("base64")}`;

/** A self-signed certificate for 127.0.0.1 (no CA the daemon trusts signed it); `undefined` without openssl. */
function selfSigned(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), "svc-selfsigned-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "k.pem"),
        "-out",
        join(dir, "c.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An HTTPS server on 127.0.0.1:`port` with `tls`, answering 200 to anything that gets through. */
async function listenUntrusted(tls: { key: Buffer; cert: Buffer }, port = 0): Promise<Server & { port: number }> {
  const server = createServer(tls, (_req, res) => res.writeHead(200).end("{}"));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("svc webhooks: the allowSubnets fix, tls_untrusted, verified (cached), ls and rm", () => {
  let rx: WebhookReceiver;
  // 127.0.0.3 is allowed but not named by the test certificate (a hostname mismatch); 127.0.0.2 is blocked.
  let mismatched: Receiver;
  const untrusted = selfSigned();
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
    mismatched = await startReceiver("127.0.0.3");
  });
  afterAll(async () => {
    await rx?.close();
    await mismatched?.close();
  });
  const fx = useDaemonProcess({
    prefix: "svc-e2e-whcli-",
    config: { webhooks: { allowSubnets: ["127.0.0.1/32", "127.0.0.3/32"] } },
  });
  const svc = (args: string[], env: NodeJS.ProcessEnv = {}, input?: string) =>
    runCli(args, { home: fx.home, env: { MY_SECRET: SECRET, ...env }, ...(input === undefined ? {} : { input }) });
  const add = (url: string, subject: string, ...extra: string[]) =>
    svc(["webhooks", "add", url, "--subject", subject, "--secret-env", "MY_SECRET", ...extra]);
  const FIX = `svc config set webhooks.allowSubnets '["127.0.0.1/32","127.0.0.3/32","127.0.0.2/32"]'`;

  it("a blocked loopback receiver: webhooks add names webhooks.allowSubnets and the exact command", async () => {
    const r = await add("https://127.0.0.2:9/hook", "ssrf:1", "--json");
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe("ssrf_blocked");
    expect(error.message).toContain(`127.0.0.2 is a loopback address; to allow your own receiver: ${FIX}`);
    const plain = await add("https://127.0.0.2:9/hook", "ssrf:1");
    expect(plain.stderr).toContain(FIX);
  });

  it("sentinel create with a webhook target gets the same fix", async () => {
    const file = join(fx.home, "target.json");
    await writeFile(file, JSON.stringify({ url: "https://127.0.0.2:9/hook", secret: SECRET }));
    const r = await svc(["sentinel", "create", "--target", "webhook", "--target-json", `@${file}`, "--subject", "s:1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(FIX);
  });

  it("svc webhooks check prints the fix (and --json carries it)", async () => {
    const r = await svc(["webhooks", "check", "https://127.0.0.2:9/hook"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`blocked (private_target)`);
    expect(r.stdout).toContain(FIX);
    const json = JSON.parse((await svc(["webhooks", "check", "https://127.0.0.2:9/hook", "--json"])).stdout);
    expect(json.fix).toBe(`127.0.0.2 is a loopback address; to allow your own receiver: ${FIX}`);
    // An address nobody runs a receiver on gets no such hint.
    const doc = JSON.parse((await svc(["webhooks", "check", "https://192.0.2.1/hook", "--json"])).stdout);
    expect(doc).toMatchObject({ allowed: false, failure: "private_target", fix: null });
  });

  it("a certificate for another name is tls_untrusted, not timeout, and says what to do", async () => {
    const r = await add(`https://127.0.0.3:${mismatched.port}/hook`, "tls:1", "--json");
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe("tls_untrusted");
    expect(error.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID.*does not name this host/);
  });

  it("a self-signed certificate is tls_untrusted, naming NODE_EXTRA_CA_CERTS", async (ctx) => {
    if (!untrusted) return ctx.skip();
    const server = await listenUntrusted(untrusted);
    try {
      const r = await add(`https://127.0.0.1:${server.port}/hook`, "tls:2", "--json");
      expect(r.code).toBe(1);
      const { error } = JSON.parse(r.stdout);
      expect(error.code).toBe("tls_untrusted");
      expect(error.message).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT.*NODE_EXTRA_CA_CERTS=/);
    } finally {
      await close(server);
    }
  });

  it("a delivery to an untrusted certificate is retried as a network error, then dies naming tls_untrusted", async (ctx) => {
    if (!untrusted) return ctx.skip();
    const trusted = await startWebhookReceiver([SECRET]);
    const created = await add(trusted.url, "tlsd:1", "--json");
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).id as string;
    await trusted.close();
    const server = await listenUntrusted(untrusted, trusted.port);
    try {
      const pushed = await svc(["sentinel", "push", "tlsd:1", "--type", "ci.done", "--id", "ev1"]);
      expect(pushed.code, pushed.stderr).toBe(0);
      const row = await until(async () => {
        const s = JSON.parse((await svc(["sentinel", "status", id, "--json"])).stdout);
        return s.target.outbox.rows.find((r: { status: string }) => r.status === "dead");
      }, "the row to die");
      expect(row).toMatchObject({ deadReason: "delivered_rejected", attempts: 5 });
      expect(row.lastError).toMatch(/^tls_untrusted: .*DEPTH_ZERO_SELF_SIGNED_CERT.*NODE_EXTRA_CA_CERTS/);
    } finally {
      await close(server);
    }
  });

  it("webhooks add says 'verified (cached)' when a cached challenge answered, and --json says so", async () => {
    const first = await add(rx.url, "cache:1", "--json");
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).spec.target.verification).toMatchObject({ cached: false });
    const challenges = rx.challenges;
    const again = await add(rx.url, "cache:2");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("(verified (cached)");
    expect(again.stdout).not.toContain("challenge verified");
    expect(rx.challenges).toBe(challenges);
    const json = await add(rx.url, "cache:3", "--json");
    expect(JSON.parse(json.stdout).spec.target.verification).toMatchObject({ cached: true });
  });

  it("webhooks ls lists the webhook sentinels (never a secret); rm removes by id, and by URL with --all", async () => {
    await svc(["sentinel", "watch", "sess:1", "--session", "ses_x"]);
    const ls = await svc(["webhooks", "ls", "--json"]);
    expect(ls.code, ls.stderr).toBe(0);
    const { webhooks } = JSON.parse(ls.stdout) as {
      webhooks: Array<{ id: string; spec: { target: { kind: string; url: string } } }>;
    };
    expect(webhooks.length).toBeGreaterThanOrEqual(3);
    expect(webhooks.every((w) => w.spec.target.kind === "webhook")).toBe(true);
    expect(ls.stdout).not.toContain(SECRET.slice(6));
    const table = await svc(["webhooks", "ls"]);
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+URL\s+MATCH/);
    expect(table.stdout).toContain("cache:1");
    expect(table.stdout).not.toContain("sess:1");

    const mine = webhooks.filter((w) => w.spec.target.url === rx.listedUrl);
    expect(mine.length).toBe(3);
    const one = await svc(["webhooks", "rm", mine[0]!.id]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain(`removed ${mine[0]!.id}`);
    const ambiguous = await svc(["webhooks", "rm", rx.url]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/2 webhook sentinels deliver to .*--all/);
    const all = await svc(["webhooks", "rm", rx.url, "--all", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout).removed.sort()).toEqual([mine[1]!.id, mine[2]!.id].sort());
    const left = JSON.parse((await svc(["webhooks", "ls", "--json"])).stdout).webhooks as Array<{ id: string }>;
    expect(left.map((w) => w.id)).not.toContain(mine[1]!.id);
    const unknown = await svc(["webhooks", "rm", "snt_nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/snt_nope is not a webhook sentinel's id; svc webhooks ls/);
  });
});
