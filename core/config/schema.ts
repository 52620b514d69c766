/**
 * The configuration schema: one export per section of SPEC.md "Configuration file". It is the
 * single source of the TypeScript types, of the JSON Schema (`svc config schema`) and of the
 * README's configuration reference. Every object is loose: unknown keys are tolerated and kept.
 *
 * Defaults are declared in {@link DEFAULTS} (and applied by the resolver), not with `.default()`,
 * so that parsing never invents values and "absent" stays distinct from "set".
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { DEFAULT_JUDGE_BASE_URL, DEFAULT_PAIR_PAGE, DEFAULT_RENDEZVOUS_URL } from "./constants.js";
import { isPairPage } from "./pair-page.js";

const nonEmpty = z.string().min(1);
const httpUrl = z
  .string()
  .regex(/^https?:\/\/[^\s/?#]+\S*$/, "must be an http(s) URL")
  .refine((v) => URL.canParse(v), "must be an http(s) URL");
const stringRecord = z.record(z.string(), z.string());
const WS_URL = /^wss?:\/\/[^\s/?#]+\S*$/;

/**
 * A number with bounds whose errors read like a person would say them: "must be 0..65535, got
 * 70000", "must be at least 0, got -1", "must be a whole number, got 1.5".
 */
function bounded(opts: { min?: number; max?: number; int?: boolean }): z.ZodNumber {
  const range =
    opts.max === undefined
      ? `at least ${opts.min}`
      : opts.min === undefined
        ? `at most ${opts.max}`
        : `${opts.min}..${opts.max}`;
  const got = (i: { input?: unknown }) => `must be ${range}, got ${String(i.input)}`;
  let n = opts.int ? z.number().int({ error: (i) => `must be a whole number, got ${String(i.input)}` }) : z.number();
  if (opts.min !== undefined) n = n.min(opts.min, { error: got });
  if (opts.max !== undefined) n = n.max(opts.max, { error: got });
  return n;
}

/** A hostname (labels of letters, digits and inner hyphens) or an IP address, IPv6 bracketed or not. */
const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/i;
const allowedHost = z
  .string()
  .refine(
    (h) => HOSTNAME.test(h) || isIP(h.replace(/^\[(.*)\]$/, "$1")) !== 0,
    'must be a hostname or an IP address alone (no scheme, port, path or wildcard), such as "svc.lan" or "192.168.1.20"',
  );

export const daemonSchema = z.looseObject({
  port: bounded({ min: 0, max: 65535, int: true }).optional().describe("Listen port (0 picks a free port)"),
  bind: nonEmpty.optional().describe("Bind address (loopback only by default)"),
  allowedOrigins: z.array(nonEmpty).optional().describe("CORS allow-list for browser callers of the daemon API"),
  allowedHosts: z
    .array(allowedHost)
    .optional()
    .describe(
      "Names (hostnames or IP addresses, no port) the daemon also answers to as `Host`, besides loopback names, this machine's addresses and daemon.bind; any other Host is refused 403 (DNS rebinding)",
    ),
  authToken: nonEmpty
    .optional()
    .describe(
      "Stable bearer token (secret); `svc serve --auth-token-file <path>` (or `--auth-token`, which `ps` shows to every user) overrides it",
    ),
  turnStallAfterMs: z.number().optional().describe("Turn-liveness watchdog threshold in ms; 0 or negative disables"),
  logMaxBytes: bounded({ min: 1024, max: 1024 ** 3, int: true })
    .optional()
    .describe("Size in bytes at which `$SVC_HOME/logs/daemon.log` is rotated to daemon.log.1"),
  logFiles: bounded({ min: 1, max: 100, int: true })
    .optional()
    .describe("Rotated log files kept (daemon.log.1 … daemon.log.<n>); the oldest is dropped at a rotation"),
});

export const pairingSchema = z.looseObject({
  rendezvous: z
    .string()
    .regex(/^$|^wss?:\/\/[^\s/?#]+\S*$/, 'must be a ws:// or wss:// URL, or "" to opt out')
    .optional()
    .describe(
      'Rendezvous broker WebSocket URL: absent = the hosted default, a URL = that broker, "" = explicit opt-out (`pair offer` then needs --rendezvous)',
    ),
  autoconnect: z
    .boolean()
    .optional()
    .describe("Open standing rendezvous connections for every persisted pairing on boot"),
  pairPage: z
    .string()
    .regex(/^https?:\/\//, "must be an http(s) URL")
    .refine(isPairPage, "must be a plain http(s) URL, or a template with {fp} in the hostname only")
    .optional()
    .describe(
      "Web pair page for `pair offer --qr`: a template with {fp} in the hostname (one origin per daemon) or a plain http(s) URL; `--pair-page` overrides it",
    ),
  allowedRoots: z
    .array(
      z
        .string()
        .min(1)
        .refine((p) => p.startsWith("/"), "must be an absolute path"),
    )
    .optional()
    .describe(
      "Directories under which a paired device with the operate scope may start sessions (cwd), place worktrees (worktreeRoot) and run swarms (baseDir, step cwds); empty or absent: such a device starts nothing",
    ),
});

const optionValue = z.union([z.boolean(), z.number(), z.string()], {
  error: "must be a boolean, a number or a string",
});

export const adapterAuthSchema = z.looseObject({
  mode: z.enum(["subscription", "api-key"]).optional().describe("Billing mode"),
  token: nonEmpty.optional().describe("Subscription token (secret)"),
  apiKey: nonEmpty.optional().describe("API key (secret)"),
  provider: nonEmpty.optional().describe("Provider name"),
});

export const adapterDefaultsSchema = z.looseObject({
  skills: z.array(nonEmpty).optional().describe("Skills added for this adapter (union with defaults.skills)"),
  options: z.record(z.string(), optionValue).optional().describe("Options for this adapter, over defaults.options"),
  auth: adapterAuthSchema.optional().describe("Billing-auth defaults merged at spawn"),
});

const pct = bounded({ min: 0, max: 100 });

export const contextContinuitySchema = z.looseObject({
  mode: z
    .enum(["act", "warn", "off"])
    .optional()
    .describe("Context-window policy: act (default) does each threshold's action, warn only warns, off does nothing"),
  warnAtPct: pct.optional().describe("Context use (percent of the model's window) at which to warn"),
  compactAtPct: pct.optional().describe("Context use (percent) at which to ask the agent to compact"),
  continueFreshAtPct: pct
    .optional()
    .describe("Context use (percent) at which to continue in a fresh session with a handoff summary"),
  hardStopAtPct: pct
    .optional()
    .describe("Context use (percent) at which to cancel the turn and refuse further prompts"),
  handoffAtQuotaRemaining: bounded({ min: 0 })
    .optional()
    .describe(
      "Emit session:handoff-suggested once per quota window when this many requests or fewer remain; unset = off",
    ),
});

export const messagingSchema = z.looseObject({
  allowSiblings: z.boolean().optional().describe("Let message_send and message_reply reach a sibling session"),
  agentInterrupt: z
    .enum(["allow", "deny"])
    .optional()
    .describe(
      "Whether a session sender's urgency interrupt may cancel the recipient's turn (denied = delivered as steer)",
    ),
  pendingPromptStaleMinutes: bounded({ min: 0 })
    .optional()
    .describe("Minutes a queued prompt may wait before it is flagged stale"),
});

export const defaultsSchema = z.looseObject({
  skills: z.array(nonEmpty).optional().describe("Global skills folded into every spawn's options.skills"),
  options: z.record(z.string(), optionValue).optional().describe("Global options merged into every spawn"),
  adapters: z
    .record(z.string(), adapterDefaultsSchema)
    .optional()
    .describe("Per-adapter overrides keyed by adapter slug"),
  defaultRoleDepthCutoff: bounded({ min: 0, int: true })
    .optional()
    .describe("Spawn depth at or above which a session defaults to executor instead of supervisor"),
  maxGrantableDelegation: bounded({ min: 0, int: true })
    .optional()
    .describe("Trust-boundary cap on delegation a supervisor can grant a child; unset = no cap"),
  extTracing: z.boolean().optional().describe("Opt in to per-session tracing by default"),
  traceRedactor: nonEmpty.optional().describe("Redactor slug applied to traced session content"),
  traceEndpoint: httpUrl
    .optional()
    .describe(
      "OTLP/HTTP traces URL, used as is (e.g. http://127.0.0.1:4318/v1/traces); over OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT (docs/tracing.md)",
    ),
  agentPromptInterrupt: z
    .boolean()
    .optional()
    .describe(
      "Default interrupt for agent_prompt and message_parent calls that omit it (false queues, true cancels the in-flight turn)",
    ),
  contextContinuity: contextContinuitySchema.optional().describe("Context-window policy"),
  messaging: messagingSchema.optional().describe("Inter-session messaging policy"),
});

export const acpAgentSchema = z.looseObject({
  bin: nonEmpty.describe("Executable to spawn (required)"),
  bin_args: z.array(z.string()).optional().describe("Extra argv"),
  name: nonEmpty.optional().describe("Display name; default the slug"),
  description: z.string().optional().describe("One-line summary shown by `acp ls`"),
  env: stringRecord.optional().describe("Always-on environment variables"),
  resumable: z.boolean().optional().describe("Advertise resumable and native-resume continuation"),
  models: z
    .looseObject({
      default: nonEmpty.optional().describe("Default model id, informational"),
      allowed: z.array(nonEmpty).optional().describe("Known model ids, informational"),
    })
    .optional()
    .describe("Known model ids {default?, allowed?}, informational"),
  install_hint: z.string().optional().describe("Shown by `acp ls` when bin is missing from PATH"),
  apiKeyEnv: nonEmpty
    .optional()
    .describe("Variable that carries defaults.adapters.<slug>.auth (default SVC_ADAPTER_API_KEY)"),
  auth: z
    .looseObject({ method: nonEmpty.optional().describe('ACP authMethods id to authenticate with, or "none"') })
    .optional()
    .describe("ACP authentication {method?}; default: the agent's api-key method when svc holds a key"),
  selectModel: z
    .looseObject({
      env: nonEmpty.optional().describe("Variable set to the requested model id"),
      args: z.array(z.string()).optional().describe("Appended to bin_args, {model} replaced by the model id"),
    })
    .optional()
    .describe("The agent's own way to take a model, when its ACP answer offers no model choice"),
  clientCapabilities: z
    .looseObject({
      fs: z
        .looseObject({
          readTextFile: z.boolean().optional().describe("Offer fs/read_text_file (default true)"),
          writeTextFile: z.boolean().optional().describe("Offer fs/write_text_file (default true)"),
        })
        .optional(),
    })
    .optional()
    .describe("What svc offers the agent at initialize (default fs read and write)"),
  startHints: z
    .array(z.looseObject({ match: nonEmpty, hint: nonEmpty }))
    .optional()
    .describe("Likely fixes named when a start error or stderr contains match"),
  modelProxy: z
    .looseObject({
      supported: z.literal(false).describe("The agent does not take the model proxy's base URLs and token"),
      why: nonEmpty.describe("Why, as its sessions and `svc llm-endpoint status` say"),
    })
    .optional()
    .describe("{supported: false, why} for an agent the llm-endpoint cannot proxy"),
});

const worktreesFields = {
  root: z
    .string()
    .regex(/^(\/|~\/)/, "must be an absolute path (or start with ~/)")
    .optional()
    .describe("Directory under which worktrees are created, layout `<root>/<repoName>/<slug>`"),
  isolation: z
    .enum(["always", "on-request", "never"])
    .optional()
    .describe("Worktree policy for agent_start's worktree field"),
  provisionConcurrency: bounded({ min: 0, int: true })
    .optional()
    .describe("Daemon-wide cap on concurrent heavy provisioning phases; 0 disables the cap"),
  provisionLoadFactor: bounded({ min: 0 })
    .optional()
    .describe("Load guard: no admission while the 1-minute load average exceeds cores x factor; 0 = off"),
};

export const worktreesSchema = z.looseObject({
  ...worktreesFields,
  provisionConcurrencyByRepo: z
    .record(z.string(), bounded({ min: 0, int: true }))
    .optional()
    .describe(
      "Extra per-repo cap `{<repo path or directory name>: cap}`, never looser than provisionConcurrency; `~/` expands; invalid entries are ignored",
    ),
});

export const spawnSchema = z.looseObject({
  attach: z
    .enum(["always", "on-request"])
    .optional()
    .describe("Whether a spawn auto-attaches to its caller as parent lineage"),
  dedupe: z
    .enum(["always", "on-request"])
    .optional()
    .describe("Implicit idempotency-key policy (label plus a hash of the initial prompt)"),
});

export const provenanceSchema = z.looseObject({
  wrapGh: z
    .boolean()
    .optional()
    .describe(
      "Prepend a shim to spawned sessions' PATH that stamps a provenance footer on pull requests created with the code host's CLI",
    ),
});

export const terminalPresetSchema = z.looseObject({
  argv: z.array(z.string()).min(1).optional().describe("Command and args"),
  env: stringRecord.optional().describe("Extra environment variables"),
  cwd: nonEmpty.optional().describe("Working directory; relative paths resolve against the CLI's cwd"),
  workspace: nonEmpty.optional().describe("Workspace slug used for the cwd when cwd is omitted"),
  name: nonEmpty.optional().describe("Stable session name passed to the registry"),
  label: nonEmpty.optional().describe("Human-readable label in session listings"),
});

export const sessionsSchema = z.looseObject({
  attentionDelaySec: bounded({ min: 0 })
    .optional()
    .describe("Seconds a session stays shown as running after its last turn ends"),
  eventsDir: nonEmpty
    .optional()
    .describe(
      "Root of per-session transcripts `<eventsDir>/<sessionId>/events.jsonl`; relative paths resolve against `$SVC_HOME`; takes effect on restart",
    ),
});

export const featuresSchema = z.looseObject({
  pty: z.boolean().optional().describe("Informational hint that pseudo-terminal support is desired"),
  llmEndpoint: z
    .boolean()
    .optional()
    .describe("Enable the local llm-endpoint proxy sidecar and its llm_endpoint_* tools"),
});

export const llmUpstreamSchema = z.looseObject({
  provider: z
    .enum(["anthropic", "openai", "gemini"], {
      error: "must be anthropic, openai or gemini (the API the upstream speaks)",
    })
    .describe(
      "The API the upstream speaks: anthropic (Messages), openai (Chat Completions and Responses) or gemini (generateContent)",
    ),
  baseUrl: httpUrl.describe(
    "Upstream base URL (anthropic: without /v1, e.g. https://api.anthropic.com; openai: with /v1, e.g. https://api.openai.com/v1; gemini: without a version, e.g. https://generativelanguage.googleapis.com); http only to loopback",
  ),
  models: z
    .array(nonEmpty)
    .optional()
    .describe(
      "Model ids this upstream serves; a trailing * matches a prefix (claude-*); empty or absent: only models routed here by name",
    ),
  keyFrom: nonEmpty
    .optional()
    .describe(
      "Adapter slug whose defaults.adapters.<slug>.auth (apiKey or token) is injected, then credentials.json llm-endpoint/<route name>; default: the provider's catalog adapter (anthropic: claude, openai: codex, gemini: gemini)",
    ),
});

export const llmBudgetsSchema = z.looseObject({
  sessionTokens: bounded({ min: 1, int: true })
    .optional()
    .describe("Tokens (input + output) one session may use; unset = no limit"),
  runTokens: bounded({ min: 1, int: true })
    .optional()
    .describe("Tokens one swarm run may use across its sessions; unset = no limit"),
  dayTokens: bounded({ min: 1, int: true })
    .optional()
    .describe("Tokens all sessions may use per UTC day; unset = no limit"),
  requestsPerMinute: bounded({ min: 1, int: true })
    .optional()
    .describe("Calls one session may start in any 60 s; unset = no limit"),
  concurrentCalls: bounded({ min: 1, int: true })
    .optional()
    .describe("Calls one session may have in flight at once; unset = no limit"),
});

export const llmEndpointSchema = z.looseObject({
  port: bounded({ min: 0, max: 65535, int: true })
    .optional()
    .describe("Loopback port of the sidecar (0 picks a free port, kept across its restarts)"),
  upstreams: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a route name of a-z, 0-9, _ and -"),
      llmUpstreamSchema,
    )
    .optional()
    .describe("Routes by name: where calls go and which key they carry (built in: anthropic, openai)"),
  budgets: llmBudgetsSchema.optional().describe("Limits past which the sidecar refuses calls"),
  upstreamTimeoutSec: bounded({ min: 1 })
    .optional()
    .describe("Seconds to wait for an upstream's response headers and between streamed bytes before answering 504"),
});

export const modelRoleObjectSchema = z.looseObject({
  model: nonEmpty.describe("Model id"),
  route: nonEmpty
    .optional()
    .describe("llm-endpoint route (a name in llmEndpoint.upstreams) that serves this role's calls"),
  profile: nonEmpty
    .optional()
    .describe(
      "Access profile: the adapter slug whose defaults.adapters.<slug>.auth key the llm-endpoint sidecar injects for this role (over the route's keyFrom)",
    ),
});

export const modelRoleValueSchema = z.union([nonEmpty, modelRoleObjectSchema], {
  error: "must be a model id string or {model, route?, profile?}",
});

export const modelsSchema = z.record(z.string().min(1), modelRoleValueSchema);

export const extJudgeSchema = z.looseObject({
  apiKey: nonEmpty
    .optional()
    .describe(
      "Judge API key (secret); read before EXT_JUDGE_API_KEY; set from stdin or --from-file, never through config_set",
    ),
  model: nonEmpty.optional().describe("Judge model id"),
  baseUrl: z
    .string()
    .regex(/^https?:\/\/[^\s/?#]+\S*$/, "must be an http(s) URL")
    .refine((v) => URL.canParse(v), "must be an http(s) URL")
    .optional()
    .describe("Judge endpoint override"),
  windowSec: bounded({ min: 0 })
    .optional()
    .describe(
      "The session steward judges a session at most once per trigger kind (stalled, turn-ended, handoff, each context threshold) in this many seconds; 0: no limit (docs/steward.md)",
    ),
  timeoutSec: bounded({ min: 0.1, max: 600 })
    .optional()
    .describe("Seconds a judge request may take, answer included, before it is recorded as judge_error"),
});

export const tunnelSchema = z.looseObject({
  host: z
    .string()
    .regex(WS_URL, "must be a ws:// or wss:// URL")
    .optional()
    .describe("WebSocket URL of the tunnel host"),
  token: nonEmpty
    .optional()
    .describe(
      "Host token (secret): the daemon's own credential at the relay, used before credentials.json; callers use the caller token derived from it (`svc tunnel caller-token`); required for e2e",
    ),
  autoconnect: z.boolean().optional().describe("Connect automatically on daemon start"),
  e2e: z.boolean().optional().describe("End-to-end encryption of the tunnel; requires token"),
});

export const webhooksSchema = z.looseObject({
  allowSubnets: z
    .array(z.string().refine((v) => ipaddr.isValidCIDR(v), "must be a CIDR range such as 127.0.0.0/8 or ::1/128"))
    .optional()
    .describe("CIDR ranges the webhook SSRF gate allows although they are private (e.g. test receivers)"),
});

export const storeSchema = z.looseObject({
  url: nonEmpty
    .optional()
    .describe(
      "Where sentinels live: absent = the files under $SVC_HOME (the default), `postgres://user@host:port/db` = team mode on that PostgreSQL database (docs/team-mode.md); SVC_STORE_URL and `svc serve --store` override it (secret: it may hold a password)",
    ),
  keyFile: nonEmpty
    .optional()
    .describe(
      "Team mode: a file (mode 0600 or stricter) holding the team's key, the base64 of 32 bytes (`svc store keygen <file>` makes one); a relative path is under $SVC_HOME; SVC_STORE_KEY_FILE overrides it, SVC_STORE_KEY (the key itself) wins over both",
    ),
});

export const profileSchema = z.looseObject({
  daemon: daemonSchema.optional().describe("Overrides of the daemon block"),
  tunnel: tunnelSchema.optional().describe("Overrides of the tunnel block"),
  features: featuresSchema.optional().describe("Overrides of the features block"),
});

const topLevelFields = {
  adapters: z
    .array(nonEmpty)
    .optional()
    .describe("Adapter package ids (svc/adapter/v1), loaded in array order; last write wins on duplicate kinds"),
  profileAliases: stringRecord
    .optional()
    .describe("Runtime-profile slug to package name for `svc install runtime-profile/<slug>`"),
  corpusPresetPackages: z
    .array(nonEmpty)
    .optional()
    .describe("Packages scanned by `svc-corpus` for starter presets (svc/corpus-preset/v1)"),
  daemon: daemonSchema.optional().describe("The daemon's listener, browser access and turn watchdog"),
  pairing: pairingSchema.optional().describe("Pairing with other devices through a rendezvous broker"),
  defaults: defaultsSchema
    .optional()
    .describe("Applied to every agent start (CLI sessions start/run, tool start_agent_session, HTTP API)"),
  spawn: spawnSchema.optional().describe("Spawn lineage and implicit idempotency"),
  provenance: provenanceSchema.optional().describe("Provenance stamping of pull requests created by agent sessions"),
  terminalPresets: z
    .record(z.string(), terminalPresetSchema)
    .optional()
    .describe("Named launch recipes for `svc sessions terminal --preset <name>`"),
  sessions: sessionsSchema.optional().describe("Session display and transcript storage"),
  features: featuresSchema.optional().describe("Optional features; defaults conservative"),
  llmEndpoint: llmEndpointSchema.optional().describe("The llm-endpoint model proxy sidecar (features.llmEndpoint)"),
  models: modelsSchema.optional().describe("Dotted role name to a model id or {model, route?, profile?}"),
  extJudge: extJudgeSchema.optional().describe("External judge backend used by the session steward"),
  tunnel: tunnelSchema.optional().describe("Outbound tunnel defaults read by `svc serve` when --connect is not passed"),
  webhooks: webhooksSchema.optional().describe("Webhook delivery settings"),
  store: storeSchema.optional().describe("Where the daemon keeps sentinels: files (default) or a team's PostgreSQL"),
  profiles: z
    .record(z.string(), profileSchema)
    .optional()
    .describe("Named bundles that shallow-override daemon, tunnel and features"),
  activeProfile: nonEmpty.optional().describe("Profile selected when --profile is not passed"),
};

/** The whole file, every entry strict: the source of the JSON Schema, the docs and the types. */
export const configSchema = z
  .looseObject({
    ...topLevelFields,
    acpAgents: z
      .record(z.string(), acpAgentSchema)
      .optional()
      .describe("ACP agent spawn recipes keyed by adapter slug"),
    worktrees: worktreesSchema
      .optional()
      .describe("Git worktrees for isolated agent sessions, and the provisioning scheduler"),
  })
  .superRefine(checkTunnels);

/**
 * The schema a file is loaded with: like {@link configSchema}, except that the entries SPEC.md
 * says are dropped (malformed `acpAgents` entries, invalid `provisionConcurrencyByRepo` entries)
 * pass here and are filtered, with a warning, by the loader.
 */
export const tolerantConfigSchema = z
  .looseObject({
    ...topLevelFields,
    acpAgents: z.record(z.string(), z.unknown()).optional(),
    worktrees: z
      .looseObject({ ...worktreesFields, provisionConcurrencyByRepo: z.record(z.string(), z.unknown()).optional() })
      .optional(),
  })
  .superRefine(checkTunnels);

/** `tunnel.e2e: true` needs a token, at the top level and in every profile (after the profile's fall-through). */
function checkTunnels(
  cfg: { tunnel?: z.infer<typeof tunnelSchema>; profiles?: Record<string, z.infer<typeof profileSchema>> },
  ctx: z.RefinementCtx,
): void {
  const check = (t: z.infer<typeof tunnelSchema> | undefined, path: PropertyKey[]) => {
    if (t?.e2e === true && typeof t.token !== "string") {
      ctx.addIssue({
        code: "custom",
        path,
        message: "tunnel.e2e: true requires tunnel.token to be set (set the token first)",
      });
    }
  };
  check(cfg.tunnel, ["tunnel", "e2e"]);
  for (const [name, p] of Object.entries(cfg.profiles ?? {})) {
    if (p.tunnel) check({ ...cfg.tunnel, ...p.tunnel }, ["profiles", name, "tunnel", "e2e"]);
  }
}

export type SvcConfigFile = z.infer<typeof configSchema>;
export type AcpAgentEntry = z.infer<typeof acpAgentSchema>;
export type TerminalPreset = z.infer<typeof terminalPresetSchema>;
export type ModelRoleValue = z.infer<typeof modelRoleValueSchema>;
export type ProfileEntry = z.infer<typeof profileSchema>;

/**
 * Built-in defaults, applied by the resolver. Values under `$SVC_HOME` are written with `~/.svc`
 * here and resolved against the actual home by the resolver.
 */
export const DEFAULTS = {
  adapters: [] as string[],
  profileAliases: {} as Record<string, string>,
  corpusPresetPackages: ["@svc/corpus-presets"],
  daemon: {
    port: 18790,
    bind: "127.0.0.1",
    allowedOrigins: [] as string[],
    allowedHosts: [] as string[],
    turnStallAfterMs: 300_000,
    logMaxBytes: 10 * 1024 * 1024,
    logFiles: 5,
  },
  pairing: { rendezvous: DEFAULT_RENDEZVOUS_URL, autoconnect: true, pairPage: DEFAULT_PAIR_PAGE },
  defaults: {
    skills: [] as string[],
    options: {} as Record<string, boolean | number | string>,
    defaultRoleDepthCutoff: 1,
    extTracing: false,
    agentPromptInterrupt: false,
    messaging: { allowSiblings: false, agentInterrupt: "deny" as const, pendingPromptStaleMinutes: 5 },
  },
  acpAgents: {} as Record<string, AcpAgentEntry>,
  worktrees: {
    root: "~/.svc/worktrees",
    isolation: "on-request" as const,
    provisionConcurrency: 2,
    provisionConcurrencyByRepo: {} as Record<string, number>,
    provisionLoadFactor: 0,
  },
  spawn: { attach: "always" as const, dedupe: "always" as const },
  provenance: { wrapGh: false },
  terminalPresets: {} as Record<string, TerminalPreset>,
  sessions: { attentionDelaySec: 60, eventsDir: "~/.svc/sessions" },
  features: { pty: false, llmEndpoint: false },
  llmEndpoint: {
    port: 18792,
    upstreams: {} as Record<string, z.infer<typeof llmUpstreamSchema>>,
    budgets: {} as z.infer<typeof llmBudgetsSchema>,
    upstreamTimeoutSec: 600,
  },
  extJudge: { model: "ext-latest", baseUrl: DEFAULT_JUDGE_BASE_URL, windowSec: 600, timeoutSec: 30 },
  tunnel: { autoconnect: false, e2e: false },
  webhooks: { allowSubnets: [] as string[] },
  profiles: {} as Record<string, ProfileEntry>,
} as const;
