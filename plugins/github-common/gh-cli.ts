/**
 * The locally installed `gh` CLI as an HTTP client: `gh api -i` (status line and headers, then the
 * body), request headers with `-H`, a JSON body on stdin (`--input -`, so secrets never reach argv).
 * Both GitHub providers use it; tests put a fake `gh` on PATH.
 */
import { spawn } from "node:child_process";
import { SvcError } from "../../core/plugin-api/index.js";

export interface GhRequest {
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  /** API path without a leading slash, e.g. `repos/acme/api/events?per_page=100`. */
  path: string;
  headers?: Record<string, string>;
  /** Sent as the JSON body on stdin. */
  body?: unknown;
}

export interface GhResponse {
  status: number;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  body: unknown;
}

export interface GhCli {
  api(req: GhRequest): Promise<GhResponse>;
  /** `gh auth status`: whether gh is installed and logged in, with a line a person can act on. */
  status(): Promise<{ installed: boolean; authenticated: boolean; detail: string }>;
}

export interface GhCliOptions {
  /** The executable; default `gh` from PATH. */
  bin?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export function createGhCli(options: GhCliOptions = {}): GhCli {
  const bin = options.bin ?? "gh";
  const timeout = options.timeoutMs ?? 30_000;
  const env = { ...(options.env ?? process.env), GH_PROMPT_DISABLED: "1", NO_COLOR: "1", GH_NO_UPDATE_NOTIFIER: "1" };
  return {
    async api(req) {
      const args = ["api", "-i", "-X", req.method ?? "GET"];
      for (const [k, v] of Object.entries(req.headers ?? {})) args.push("-H", `${k}: ${v}`);
      if (req.body !== undefined) args.push("--input", "-");
      args.push(req.path);
      const out = await run(bin, args, env, timeout, req.body === undefined ? undefined : JSON.stringify(req.body));
      return parseApiOutput(out.stdout, req.path, out.stderr);
    },
    async status() {
      try {
        const out = await run(bin, ["auth", "status", "--hostname", "github.com"], env, timeout);
        if (out.code === 0)
          return { installed: true, authenticated: true, detail: "gh is installed and authenticated to github.com" };
        return {
          installed: true,
          authenticated: false,
          detail: "gh is installed but not authenticated: run `gh auth login`",
        };
      } catch (err) {
        if (SvcError.is(err) && err.code === "unavailable")
          return { installed: false, authenticated: false, detail: err.message };
        throw err;
      }
    },
  };
}

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv, timeout: number, input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, timeout, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT")
        reject(
          new SvcError(
            "unavailable",
            `${bin} is not on PATH: install the GitHub CLI (https://cli.github.com) and run \`gh auth login\``,
          ),
        );
      else reject(new SvcError("unavailable", `running ${bin} failed: ${err.message}`));
    });
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input ?? "");
  });
}

/** Parses `gh api -i` output: `HTTP/x.y <status> <text>`, header lines, a blank line, the body. */
function parseApiOutput(stdout: string, path: string, stderr = ""): GhResponse {
  const m = /^HTTP\/[\d.]+ (\d{3})[^\n]*\r?\n/.exec(stdout);
  if (!m) {
    const why = stderr.split("\n").find((l) => l.trim()) ?? "no HTTP status in its output";
    throw new SvcError("unavailable", `gh api ${path.split("?")[0]} failed: ${why.slice(0, 200)}`);
  }
  const rest = stdout.slice(m[0].length);
  const split = /\r?\n\r?\n/.exec(rest);
  const head = split ? rest.slice(0, split.index) : rest;
  const text = split ? rest.slice(split.index + split[0].length) : "";
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body: unknown;
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: Number(m[1]), headers, body };
}
