import { SvcError, type AcpRecipe } from "../../core/plugin-api/index.js";
import { redact } from "./stderr-tail.js";

/** A JSON-RPC error as an agent sent it (the ACP SDK rejects with its fields). */
export interface AgentRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** ACP's `auth_required` error code. */
export const AUTH_REQUIRED = -32000;

/** The agent's own JSON-RPC error, when `err` is one (the SDK's RequestError, or the plain object some SDKs reject with). */
export function rpcErrorOf(err: unknown): AgentRpcError | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { code, message, data } = err as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof code !== "number" || typeof message !== "string") return undefined;
  return { code, message, ...(data !== undefined && data !== null ? { data } : {}) };
}

/** At most this much of an error's `data` is shown. */
const MAX_DATA = 400;

/**
 * The start error for an agent that answered `step` with a JSON-RPC error: the agent's code,
 * message and data, the tail of its stderr, and the likely fix where the recipe names one
 * (`startHints`) or svc knows it (authentication). Secrets are redacted throughout.
 */
export function agentRefused(
  slug: string,
  step: string,
  rpc: AgentRpcError,
  ctx: { recipe: AcpRecipe; stderr: string; secrets: readonly string[]; authMethods?: string },
): SvcError {
  const data = rpc.data === undefined ? "" : `; data: ${clip(JSON.stringify(rpc.data))}`;
  const parts = [`ACP agent "${slug}" refused ${step}: ${rpc.message} (code ${rpc.code}${data})`];
  if (ctx.stderr) parts.push(`stderr: ${ctx.stderr}`);
  const hint = hintFor(slug, rpc, ctx);
  if (hint) parts.push(hint);
  const text = redact(parts.join("; "), ctx.secrets);
  // Not `unauthorized`: that would read as the caller's own credential being wrong.
  return new SvcError("unavailable", text, {
    details: { agentError: JSON.parse(redact(JSON.stringify(rpc), ctx.secrets)) as AgentRpcError },
  });
}

function hintFor(
  slug: string,
  rpc: AgentRpcError,
  ctx: { recipe: AcpRecipe; stderr: string; authMethods?: string },
): string | undefined {
  const haystack = `${rpc.message} ${JSON.stringify(rpc.data ?? "")} ${ctx.stderr}`.toLowerCase();
  const named = ctx.recipe.startHints?.find((h) => haystack.includes(h.match.toLowerCase()));
  if (named) return named.hint;
  if (rpc.code !== AUTH_REQUIRED) return undefined;
  const methods = ctx.authMethods ? ` (the agent offers ${ctx.authMethods})` : "";
  return `set its key: svc config set defaults.adapters.${slug}.auth.apiKey (from stdin), or name a method with acpAgents.${slug}.auth.method${methods}`;
}

function clip(s: string): string {
  return s.length > MAX_DATA ? `${s.slice(0, MAX_DATA)}…` : s;
}
