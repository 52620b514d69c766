/**
 * The shapes of secrets, by key name and by value, shared by every place that hides them: the
 * key-and-prefix heuristic over JSON payloads (core/daemon/mcp/redact.ts) and the `secrets`
 * redactor over free text (core/redaction/builtins.ts).
 */
import { REDACTED } from "../plugin-api/redaction.js";

/** Any key ending in `token` (`github_token`, `accessToken`), `secret`, `password`, `apikey`, …; compared case, `-` and `_` aside. */
const SECRET_KEY_ENDINGS = ["secret", "password", "passwd", "authorization", "apikey", "token", "privatekey"];
const SECRET_KEYS = new Set(["credential", "credentials"]);

/** True when a key's name suggests a secret, case, `-` and `_` aside (`api_key`, `X-Authorization`, `github_token`). */
export function looksLikeSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_]/g, "");
  return SECRET_KEYS.has(k) || SECRET_KEY_ENDINGS.some((end) => k.endsWith(end));
}

/** Prefixes only secrets carry: webhook secrets and refs, GitHub tokens, OpenAI/Anthropic keys, llm-endpoint session tokens. */
const SECRET_PREFIXES = ["whsec_", "swsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "svc_llm_"];

/** True when a whole value starts like a secret (`whsec_…`, `ghp_…`). */
export function startsLikeSecret(value: string): boolean {
  return SECRET_PREFIXES.some((p) => value.startsWith(p));
}

/** Not glued to a word before it: `task-manager` holds no `sk-` key. */
const START = "(?<![A-Za-z0-9])";

/**
 * Secret shapes in free text. Each match is replaced whole by {@link REDACTED}, except where a
 * group keeps a harmless lead (`Bearer `, `api_key=`).
 */
const TEXT_SHAPES: ReadonlyArray<{ name: string; re: RegExp; keep?: boolean }> = [
  {
    name: "pem private key",
    re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  { name: "anthropic/openai key", re: new RegExp(`${START}sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}`, "g") },
  { name: "github token", re: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,})`, "g") },
  { name: "webhook secret", re: new RegExp(`${START}(?:whsec|swsec)_[A-Za-z0-9+/=_-]{4,}`, "g") },
  { name: "llm-endpoint session token", re: new RegExp(`${START}svc_llm_[A-Za-z0-9]{8,}`, "g") },
  { name: "aws access key id", re: new RegExp(`${START}(?:AKIA|ASIA)[A-Z0-9]{16}`, "g") },
  { name: "jwt", re: new RegExp(`${START}eyJ[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]*`, "g") },
  {
    // `api_key=…`, `"password": "…"`, `GH_TOKEN: …`, `Authorization: Basic …`: the value, not a count.
    name: "secret-named value",
    re: /(\b[A-Za-z0-9_.-]*(?:secret|password|passwd|token|api[_-]?key|access[_-]?key|private[_-]?key|authorization|credentials?)["']?\s*[:=]\s*["']?(?:(?:Bearer|Basic|Token)\s+)?)(?!\d+(?![A-Za-z_-]))[^\s"'&,;]+/gi,
    keep: true,
  },
  { name: "bearer credential", re: /(\b(?:Bearer|Basic|Token)\s+)[A-Za-z0-9._~+/=-]{6,}/gi, keep: true },
];

/** `text` with every known secret shape replaced by {@link REDACTED}. */
export function redactSecretShapes(text: string): string {
  let out = text;
  for (const { re, keep } of TEXT_SHAPES) {
    out = keep ? out.replace(re, (_m, lead: string) => `${lead}${REDACTED}`) : out.replace(re, REDACTED);
  }
  return out;
}

/** The names of the shapes, for documentation and tests. */
export const SECRET_SHAPE_NAMES = TEXT_SHAPES.map((s) => s.name);
