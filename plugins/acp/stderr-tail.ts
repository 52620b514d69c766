import { REDACTED, SECRET_ENV_NAME, type SessionStartSpec } from "../../core/plugin-api/index.js";

const MAX_CHUNKS = 20;

/**
 * The last lines an agent wrote to stderr, for its exit error. The agent holds the session's
 * credentials in its environment, so every secret value it was started with is replaced by
 * {@link REDACTED} before the tail is shown anywhere (listings, transcript, events, turn errors).
 */
export class StderrTail {
  private readonly chunks: string[] = [];
  private truncated = false;

  constructor(private readonly secrets: readonly string[]) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    if (this.chunks.length > MAX_CHUNKS) {
      this.chunks.shift();
      this.truncated = true;
    }
  }

  /** The last `n` lines, redacted, joined with ` | ` ("" when there are none). */
  lines(n = 3): string {
    let lines = redact(this.chunks.join(""), this.secrets).trim().split("\n");
    // Once chunks were dropped the first kept line may start mid-secret: never show it.
    if (this.truncated) lines = lines.slice(1);
    return lines.slice(-n).join(" | ");
  }
}

/**
 * The secret values an agent is started with: its auth key and token, and the values of the
 * secret-named variables ({@link SECRET_ENV_NAME}) of the environment it gets, the recipe's and
 * the ones it inherits from the daemon (a provider key exported in the shell that started it).
 */
export function sessionSecrets(auth: SessionStartSpec["auth"], env: NodeJS.ProcessEnv): string[] {
  const fromEnv = Object.entries(env)
    .filter(([name]) => SECRET_ENV_NAME.test(name))
    .map(([, value]) => value);
  return [auth?.apiKey, auth?.token, ...fromEnv].filter((v): v is string => typeof v === "string" && v !== "");
}

/** `text` with every occurrence of each secret replaced (longest first, so one secret inside another goes whole). */
export function redact(text: string, secrets: readonly string[]): string {
  return [...secrets].sort((a, b) => b.length - a.length).reduce((out, s) => out.split(s).join(REDACTED), text);
}
