/** A spawn recipe for an agent that speaks ACP over stdio (SPEC.md `acpAgents` fields). */
export interface AcpRecipe {
  bin: string;
  bin_args?: string[];
  name?: string;
  description?: string;
  env?: Record<string, string>;
  resumable?: boolean;
  models?: { default?: string; allowed?: string[] };
  install_hint?: string;
  /**
   * Environment variable that carries `defaults.adapters.<slug>.auth.apiKey` (set by the catalog;
   * a config entry shadowing a catalog slug inherits it; otherwise `SVC_ADAPTER_API_KEY`).
   */
  apiKeyEnv?: string;
  /**
   * How svc authenticates over ACP: `method` is the `authMethods` id to call `authenticate` with
   * (default: the advertised method whose id or name says "api key", when svc holds a key), or
   * `"none"` never to call it.
   */
  auth?: { method?: string };
  /**
   * The agent's own way to take a model at start, used when its ACP answer offers no model choice
   * (no `configOptions` entry of category `model`, no `models`): `env` names a variable set to the
   * model id, `args` are appended to `bin_args` with `{model}` replaced by it.
   */
  selectModel?: { env?: string; args?: string[] };
  /** What svc offers at `initialize` (default: `fs.readTextFile` and `fs.writeTextFile` true). */
  clientCapabilities?: { fs?: { readTextFile?: boolean; writeTextFile?: boolean } };
  /**
   * Likely fixes for start failures: when an agent's error or stderr contains `match`
   * (case-insensitive), its start error ends with `hint`.
   */
  startHints?: Array<{ match: string; hint: string }>;
  /**
   * `{ supported: false, why }` for an agent that does not take the model proxy's base URLs and
   * session token (docs/llm-endpoint.md): its sessions say so (`info.modelProxy`), and
   * `svc llm-endpoint status` lists them.
   */
  modelProxy?: { supported: false; why: string };
}

/** Recipe fields that describe the agent itself: a config entry shadowing a catalog slug inherits them. */
export const AGENT_TRAITS = [
  "apiKeyEnv",
  "auth",
  "selectModel",
  "clientCapabilities",
  "startHints",
  "modelProxy",
] as const;

/**
 * The curated catalog: real agents that speak the Agent Client Protocol today. A config
 * `acpAgents` entry of the same slug shadows one of these; a real `@svc/adapter-<slug>` package
 * shadows both.
 */
export const ACP_CATALOG: Readonly<Record<string, AcpRecipe>> = Object.freeze({
  gemini: {
    bin: "gemini",
    bin_args: ["--acp"],
    name: "Gemini CLI",
    description: "Google's Gemini CLI in ACP mode (older releases use --experimental-acp)",
    install_hint: "npm install -g @google/gemini-cli",
    apiKeyEnv: "GEMINI_API_KEY",
    env: {
      // Headless, Gemini CLI refuses a folder the user has not trusted in its own TUI; the session's
      // cwd is the one its caller chose.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    },
    // Offered client fs, Gemini 0.61 cannot create a file: svc answers the read of a missing path
    // with ACP's resource-not-found error, Gemini's ENOENT mapping misses it, and write_file fails
    // with "Error checking existing file". Without client fs it uses its own file tools.
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
    // Its ACP models list offers a few ids; any other goes in by flag.
    selectModel: { args: ["--model", "{model}"] },
  },
  claude: {
    bin: "claude-agent-acp",
    name: "Claude Code",
    description: "Claude Code through the ACP adapter built on the Claude Agent SDK",
    install_hint: "npm install -g @agentclientprotocol/claude-agent-acp (formerly @zed-industries/claude-code-acp)",
    apiKeyEnv: "ANTHROPIC_API_KEY",
    env: {
      // The adapter takes any non-empty IS_SANDBOX as a sandbox and then asks Claude Code to skip
      // permissions, which as root accepts IS_SANDBOX=1 only (IS_SANDBOX=yes fails every start).
      IS_SANDBOX: "${IS_SANDBOX:+1}",
    },
    // Its model option offers aliases (default, opus, sonnet, haiku); a full id goes in by env.
    selectModel: { env: "ANTHROPIC_MODEL" },
    startHints: [
      {
        // The adapter takes any IS_SANDBOX as a sandbox, Claude Code as root accepts only 1.
        match: "cannot be used with root",
        hint: "Claude Code as root accepts IS_SANDBOX=1 only: set acpAgents.claude.env.IS_SANDBOX to 1 (or unset IS_SANDBOX)",
      },
    ],
  },
  codex: {
    bin: "codex-acp",
    name: "Codex",
    description: "OpenAI Codex through its ACP adapter",
    install_hint: "npm install -g @agentclientprotocol/codex-acp (formerly @zed-industries/codex-acp)",
    apiKeyEnv: "OPENAI_API_KEY",
    env: {
      // No browser login from a daemon: the agent offers its api-key method only.
      NO_BROWSER: "1",
      // Codex ignores OPENAI_BASE_URL: where it is set (the model proxy sets it per session), a
      // provider of that base URL speaking the Responses API is given on codex's command line
      // (codex-acp turns these into `-c model_provider=… -c model_providers.svc={…}`).
      MODEL_PROVIDER: "${OPENAI_BASE_URL:+svc}",
      CODEX_CONFIG:
        '{"model_providers":{"svc":{"name":"svc","base_url":"${OPENAI_BASE_URL}","wire_api":"responses","env_key":"OPENAI_API_KEY"}}}',
    },
  },
  opencode: {
    bin: "opencode",
    bin_args: ["acp"],
    name: "OpenCode",
    description: "sst's OpenCode agent in ACP mode",
    install_hint: "npm install -g opencode-ai",
    apiKeyEnv: "OPENAI_API_KEY",
    env: {
      // Where OPENAI_BASE_URL is set (the model proxy sets it per session), an OpenAI-compatible
      // provider `svc` of that base URL, with the requested model (default gpt-5), over the
      // user's own opencode configuration.
      OPENCODE_CONFIG_CONTENT:
        '{"provider":{"svc":{"npm":"@ai-sdk/openai-compatible","name":"svc","options":{"baseURL":"${OPENAI_BASE_URL}","apiKey":"{env:OPENAI_API_KEY}"},"models":{"${SVC_OPENCODE_MODEL:-gpt-5}":{"name":"${SVC_OPENCODE_MODEL:-gpt-5}","tool_call":true}}}},"model":"svc/${SVC_OPENCODE_MODEL:-gpt-5}","small_model":"svc/${SVC_OPENCODE_MODEL:-gpt-5}"}',
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      // No fetch of the models.dev catalogue at every start.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
    },
    selectModel: { env: "SVC_OPENCODE_MODEL" },
  },
  goose: {
    bin: "goose",
    bin_args: ["acp"],
    name: "Goose",
    description: "Block's Goose agent in ACP mode",
    install_hint: "see https://block.github.io/goose/docs/getting-started/installation",
    modelProxy: {
      supported: false,
      why: "Goose takes its provider's host from its own configuration (OPENAI_HOST, ANTHROPIC_HOST), not the base URLs svc sets; not tried here (it is not on npm)",
    },
  },
});
