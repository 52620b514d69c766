/**
 * Every ```sh block of the README and docs/ is run, in order, one bash script per file, the way a
 * reader would paste them: `svc` on PATH (a shim for the built CLI), a fresh HOME, none of the test
 * suite's TLS trust, cwd the repository. Blocks marked ```sh setup install things on the reader's
 * machine (npm ci, npm link): CI runs the npm ci ones itself, and the npm link one runs here in
 * a scratch npm prefix; synopses with placeholders are ```text.
 * The fixed ports a doc uses (8443, 18791) are swapped for free ones so two suites can run at once.
 * What the README's tour says happens without NODE_EXTRA_CA_CERTS is run too: its error code must
 * be the one the daemon answers, and every error code the README names one the webhook challenge
 * or delivery produces.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHALLENGE_FAILURES } from "../../plugins/webhook-target/challenge.js";
import { DELIVERY_FAILURES } from "../../plugins/webhook-target/failure-category.js";
import { freePort } from "../support/http.js";
import { CLI_PATH, REPO_ROOT } from "../support/paths.js";
import { docFiles, fencesOf } from "./doc-files.js";

const DOC_PORTS = [8443, 18791];
/** A doc's commands wait for conditions (a daemon up, a delivery logged); this bounds a wait that never ends. */
const SCRIPT_LIMIT_MS = 150_000;

/** Background jobs a doc started (the daemon, a receiver) share the script's process group: stop them all. */
async function stopGroup(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, "SIGTERM");
  for (let i = 0; i < 300 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(-pgid, "SIGKILL");
}

async function runScript(script: string): Promise<{ code: number | null; out: string }> {
  const dir = await mkdtemp(join(tmpdir(), "svc-doc-"));
  try {
    const bin = join(dir, "bin");
    await mkdir(bin);
    await writeFile(join(bin, "svc"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
    await chmod(join(bin, "svc"), 0o755);
    let text = script;
    for (const p of DOC_PORTS) text = text.replaceAll(String(p), String(await freePort()));
    const file = join(dir, "script.sh");
    await writeFile(file, `set -euo pipefail\n${text}\n`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: join(dir, "home"),
      TMPDIR: dir,
      PATH: `${bin}:${process.env.PATH}`,
    };
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.SVC_HOME;
    await mkdir(env.HOME!);
    const child = spawn("bash", [file], { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    // "exit", not "close": background jobs keep the script's output pipes open.
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        out += `\n[commands.test: still running after ${SCRIPT_LIMIT_MS / 1000} s; stopped]`;
        resolve(null);
      }, SCRIPT_LIMIT_MS);
      child.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    await stopGroup(child.pid!);
    return { code, out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("the README's `svc` on PATH block", () => {
  it("npm link puts svc on PATH (in a scratch npm prefix, not the reader's), and the undo it names removes it", async () => {
    const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
    const block = fencesOf(readme).find((f) => f.info === "sh setup" && /^npm link\b/m.test(f.body));
    expect(block, "README.md has a ```sh setup block with npm link").toBeDefined();
    const undo = /`(npm unlink -g [^`]+)`/.exec(block!.body)?.[1];
    expect(undo, "the npm link line names its undo").toBeDefined();
    const script = [
      // npm's own variables (set when the suite runs under npm or npx) would name the real prefix.
      'for v in $(compgen -e | grep -i "^npm_config_"); do unset "$v"; done',
      'export NPM_CONFIG_PREFIX="$(mktemp -d)"',
      'export PATH="$NPM_CONFIG_PREFIX/bin:$PATH"',
      block!.body,
      'test "$(command -v svc)" = "$NPM_CONFIG_PREFIX/bin/svc"',
      "svc --version",
      undo!,
      'test ! -e "$NPM_CONFIG_PREFIX/bin/svc"',
    ].join("\n");
    const { code, out } = await runScript(script);
    expect(code, out).toBe(0);
    expect(out).toMatch(/^\d+\.\d+\.\d+$/m);
  });
});

describe("every ```sh block in the docs runs", () => {
  for (const file of docFiles()) {
    it(`${file}`, async () => {
      const text = await readFile(join(REPO_ROOT, file), "utf8");
      const fences = fencesOf(text);
      for (const f of fences) {
        expect(f.info, `${file}:${f.line}: use \`\`\`sh (run by this test) or \`\`\`text (a synopsis)`).not.toMatch(
          /^(bash|shell|console|zsh)\b/,
        );
      }
      const blocks = fences.filter((f) => f.info === "sh");
      if (blocks.length === 0) return;
      const script = blocks.map((b) => `# ${file}:${b.line}\n${b.body}`).join("\n");
      const { code, out } = await runScript(script);
      expect(code, `${file}'s commands failed:\n${out}`).toBe(0);
    }, 180_000);
  }
});

describe("the README tour's words about a certificate Node does not trust", () => {
  const readme = () => readFile(join(REPO_ROOT, "README.md"), "utf8");

  it("every error code the README names is one the webhook challenge or delivery produces", async () => {
    const named = [...(await readme()).matchAll(/\bcodes? `([a-z_]+)`/g)].map((m) => m[1]!);
    expect(named.length, "the README names at least the tour's error code").toBeGreaterThan(0);
    const real = new Set<string>([...CHALLENGE_FAILURES, ...DELIVERY_FAILURES]);
    for (const code of named) expect(real, `README.md names the error code \`${code}\``).toContain(code);
  });

  it("without NODE_EXTRA_CA_CERTS the tour's `svc webhooks add` fails with the code and the Node code the README names", async () => {
    const text = await readme();
    const claim =
      /without it the\s+challenge fails with code `([a-z_]+)` and `([A-Z_]+)`, and the error names this variable/.exec(
        text,
      );
    expect(claim, "README.md's tour says how the challenge fails without NODE_EXTRA_CA_CERTS").not.toBeNull();
    const [, code, nodeCode] = claim!;
    const start = text.indexOf("## A five-minute tour");
    const tour = text.slice(start, text.indexOf("\n## ", start + 1));
    const blocks = fencesOf(tour).filter((f) => f.info === "sh");
    const serve = /NODE_EXTRA_CA_CERTS=\S+ (svc serve\b)/;
    const serveAt = blocks.findIndex((b) => serve.test(b.body));
    const add = blocks.flatMap((b) => b.body.split("\n")).find((l) => l.startsWith("svc webhooks add "));
    expect(serveAt, "the tour starts the daemon with NODE_EXTRA_CA_CERTS=… svc serve").toBeGreaterThanOrEqual(0);
    expect(add, "the tour runs svc webhooks add").toBeDefined();
    const script = [
      ...blocks.slice(0, serveAt + 1).map((b) => b.body.replace(serve, "$1")),
      `if out="$(${add} --json)"; then echo "svc webhooks add succeeded without NODE_EXTRA_CA_CERTS"; exit 1; fi`,
      'printf "%s\\n" "--- answer" "$out"',
    ].join("\n");
    const { code: exit, out } = await runScript(script);
    expect(exit, out).toBe(0);
    const answer = JSON.parse(out.slice(out.indexOf("--- answer\n") + "--- answer\n".length)) as {
      error: { code: string; message: string };
    };
    expect(answer.error.code, out).toBe(code);
    expect(answer.error.message).toContain(nodeCode);
    expect(answer.error.message).toContain("NODE_EXTRA_CA_CERTS");
  }, 180_000);
});
