/**
 * The configuration schema: one export per section of SPEC.md "Configuration file". It is the
 * single source of the TypeScript types, of the JSON Schema (`svc config schema`) and of the
 * README's configuration reference. Every object is loose: unknown keys are tolerated and kept.
 *
 * Defaults are declared in {@link DEFAULTS} (and applied by the resolver), not with `.default()`,
 * so that parsing never invents values and "absent" stays distinct from "set".
 */
import { z } from "zod";

const nonEmpty = z.string().min(1);
const stringRecord = z.record(z.string(), z.string());

export const daemonSchema = z.looseObject({
  port: z.number().int().min(0).max(65535).optional().describe("Listen port"),
  bind: nonEmpty.optional().describe("Bind address (loopback only by default)"),
  allowedOrigins: z.array(nonEmpty).optional().describe("CORS allow-list for browser callers of the daemon API"),
  authToken: nonEmpty.optional().describe("Stable bearer token for /mcp, /events, /conversations* and the heartbeat tick route; `svc serve --auth-token` overrides it"),
  turnStallAfterMs: z.number().optional().describe("Turn-liveness watchdog threshold in ms; 0 or negative disables"),
});

const pairPageSchema = z
  .string()
  .refine(isPairPage, "must be an http(s) URL, or a template with {fp} in the hostname");

export const pairingSchema = z.looseObject({
  rendezvous: z
    .string()
    .refine((v) => v === "" || isWsUrl(v), "must be a ws:// or wss:// URL, or \"\" to opt out")
    .optional()
    .describe("Rendezvous broker WebSocket URL; absent = hosted default, \"\" = explicit opt-out"),
  autoconnect: z.boolean().optional().describe("Open standing rendezvous connections for every persisted pairing on boot"),
  pairPage: pairPageSchema.optional().describe("Web pair page for `pair offer --qr`: a template with {fp} in the hostname, or a plain http(s) URL"),
});

const optionValue = z.union([z.boolean(), z.number(), z.string()]);

export const adapterAuthSchema = z.looseObject({
  mode: z.enum(["subscription", "api-key"]).optional(),
  token: nonEmpty.optional(),
  apiKey: nonEmpty.optional(),
  provider: nonEmpty.optional(),
});

export const adapterDefaultsSchema = z.looseObject({
  skills: z.array(nonEmpty).optional(),
  options: z.record(z.string(), optionValue).optional(),
  auth: adapterAuthSchema.optional(),
});

const pct = z.number().min(0).max(100);

export const contextContinuitySchema = z.looseObject({
  mode: z.enum(["off", "warn", "compact", "continue-fresh"]).optional(),
  warnAtPct: pct.optional(),
  compactAtPct: pct.optional(),
  continueFreshAtPct: pct.optional(),
  hardStopAtPct: pct.optional(),
  handoffAtQuotaRemaining: z.number().min(0).optional(),
});

export const messagingSchema = z.looseObject({
  allowSiblings: z.boolean().optional(),
  agentInterrupt: z.enum(["allow", "deny"]).optional(),
  pendingPromptStaleMinutes: z.number().min(0).optional(),
});

export const defaultsSchema = z.looseObject({
  skills: z.array(nonEmpty).optional().describe("Global skills folded into every spawn's options.skills"),
  options: z.record(z.string(), optionValue).optional().describe("Global options merged into every spawn"),
  adapters: z.record(z.string(), adapterDefaultsSchema).optional().describe("Per-adapter overrides keyed by adapter slug"),
  defaultRoleDepthCutoff: z.number().int().min(0).optional().describe("Spawn depth at or above which a session defaults to executor"),
  maxGrantableDelegation: z.number().int().min(0).optional().describe("Cap on delegation a supervisor can grant a child"),
  extTracing: z.boolean().optional().describe("Opt in to per-session tracing by default"),
  traceRedactor: nonEmpty.optional().describe("Redactor slug applied to traced session content"),
  agentPromptInterrupt: z.boolean().optional().describe("Default interrupt for agent_prompt and message_parent calls that omit it"),
  contextContinuity: contextContinuitySchema.optional().describe("Context-window policy"),
  messaging: messagingSchema.optional().describe("Inter-session messaging policy"),
});

export const acpAgentSchema = z.looseObject({
  bin: nonEmpty.describe("Executable to spawn"),
  bin_args: z.array(z.string()).optional(),
  name: nonEmpty.optional(),
  description: z.string().optional(),
  env: stringRecord.optional(),
  resumable: z.boolean().optional(),
  models: z.looseObject({ default: nonEmpty.optional(), allowed: z.array(nonEmpty).optional() }).optional(),
  install_hint: z.string().optional(),
});

export const worktreesSchema = z.looseObject({
  root: z.string().refine((p) => p.startsWith("/") || p.startsWith("~/"), "must be an absolute path").optional(),
  isolation: z.enum(["always", "on-request", "never"]).optional(),
  provisionConcurrency: z.number().int().min(0).optional(),
  provisionConcurrencyByRepo: z.record(z.string(), z.unknown()).optional(),
  provisionLoadFactor: z.number().min(0).optional(),
});

export const spawnSchema = z.looseObject({
  attach: z.enum(["always", "on-request"]).optional(),
  dedupe: z.enum(["always", "on-request"]).optional(),
});

export const provenanceSchema = z.looseObject({
  wrapGh: z.boolean().optional(),
});

export const terminalPresetSchema = z.looseObject({
  argv: z.array(z.string()).min(1).optional(),
  env: stringRecord.optional(),
  cwd: nonEmpty.optional(),
  workspace: nonEmpty.optional(),
  name: nonEmpty.optional(),
  label: nonEmpty.optional(),
});

export const sessionsSchema = z.looseObject({
  attentionDelaySec: z.number().min(0).optional(),
  eventsDir: nonEmpty.optional(),
});

export const featuresSchema = z.looseObject({
  pty: z.boolean().optional(),
  llmEndpoint: z.boolean().optional(),
});

export const modelRoleValueSchema = z.union([
  nonEmpty,
  z.looseObject({ model: nonEmpty, route: nonEmpty.optional(), profile: nonEmpty.optional() }),
]);

export const modelsSchema = z.record(z.string(), modelRoleValueSchema);

export const extJudgeSchema = z.looseObject({
  apiKey: nonEmpty.optional(),
  model: nonEmpty.optional(),
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
});

export const tunnelSchema = z
  .looseObject({
    host: z.string().refine(isWsUrl, "must be a ws:// or wss:// URL").optional(),
    token: nonEmpty.optional(),
    autoconnect: z.boolean().optional(),
    e2e: z.boolean().optional(),
  })
  .refine((t) => t.e2e !== true || typeof t.token === "string", {
    message: "tunnel.e2e requires tunnel.token to be set",
    path: ["e2e"],
  });

export const webhooksSchema = z.looseObject({
  allowSubnets: z.array(z.string().refine(isCidr, "must be a CIDR range such as 127.0.0.0/8 or ::1/128")).optional(),
});

export const profileSchema = z.looseObject({
  daemon: daemonSchema.optional(),
  tunnel: tunnelSchema.optional(),
  features: featuresSchema.optional(),
});

export const configSchema = z.looseObject({
  adapters: z.array(nonEmpty).optional().describe("Adapter package ids, loaded in array order; last write wins"),
  profileAliases: stringRecord.optional().describe("Runtime-profile slug to package name"),
  corpusPresetPackages: z.array(nonEmpty).optional().describe("Packages scanned by `corpus` for starter presets"),
  daemon: daemonSchema.optional(),
  pairing: pairingSchema.optional(),
  defaults: defaultsSchema.optional(),
  acpAgents: z.record(z.string(), z.unknown()).optional().describe("ACP agent spawn recipes keyed by slug (malformed entries are dropped with a warning)"),
  worktrees: worktreesSchema.optional(),
  spawn: spawnSchema.optional(),
  provenance: provenanceSchema.optional(),
  terminalPresets: z.record(z.string(), terminalPresetSchema).optional(),
  sessions: sessionsSchema.optional(),
  features: featuresSchema.optional(),
  models: modelsSchema.optional(),
  extJudge: extJudgeSchema.optional(),
  tunnel: tunnelSchema.optional(),
  webhooks: webhooksSchema.optional(),
  profiles: z.record(z.string(), profileSchema).optional(),
  activeProfile: nonEmpty.optional(),
});

export type SvcConfigFile = z.infer<typeof configSchema>;
export type AcpAgentEntry = z.infer<typeof acpAgentSchema>;
export type TerminalPreset = z.infer<typeof terminalPresetSchema>;
export type ModelRoleValue = z.infer<typeof modelRoleValueSchema>;

/** Built-in defaults, applied by the resolver. */
export const DEFAULTS = {
  daemon: { port: 18790, bind: "127.0.0.1", allowedOrigins: [] as string[], turnStallAfterMs: 300_000 },
  corpusPresetPackages: ["@svc/corpus-presets"],
  defaults: {
    defaultRoleDepthCutoff: 1,
    agentPromptInterrupt: false,
    messaging: { allowSiblings: false, agentInterrupt: "deny" as const, pendingPromptStaleMinutes: 5 },
  },
  worktrees: { isolation: "on-request" as const, provisionConcurrency: 2, provisionLoadFactor: 0 },
  spawn: { attach: "always" as const, dedupe: "always" as const },
  provenance: { wrapGh: false },
  sessions: { attentionDelaySec: 60 },
  features: { pty: false, llmEndpoint: false },
  extJudge: { model: "ext-latest" },
  webhooks: { allowSubnets: [] as string[] },
} as const;

function isWsUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === "ws:" || u.protocol === "wss:";
  } catch {
    return false;
  }
}

function isPairPage(v: string): boolean {
  const probe = v.replaceAll("{fp}", "fp");
  try {
    const u = new URL(probe);
    if (u.protocol !== "http:" && u.protocol !== "https:") return false;
    if (!v.includes("{fp}")) return true;
    // {fp} must sit in the hostname: one browser origin per daemon.
    const host = new URL(v.replaceAll("{fp}", "zzfpzz")).hostname;
    return host.includes("zzfpzz") && !new URL(v.replaceAll("{fp}", "zzfpzz")).pathname.includes("zzfpzz");
  } catch {
    return false;
  }
}

function isCidr(v: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(v);
  if (!m) return false;
  const [, addr, bits] = m;
  const n = Number(bits);
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(addr!)) return n <= 32 && addr!.split(".").every((o) => Number(o) <= 255);
  return addr!.includes(":") && n <= 128;
}
