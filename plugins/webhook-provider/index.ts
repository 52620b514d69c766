/**
 * The `webhook` provider: receives GitHub's webhooks at `POST /providers/webhook/github` (signed
 * with the secret set through `setup_sentinel_provider`), and, when a public base URL is set,
 * registers one repository hook per watched repository through `gh`. Same subjects and event
 * types as `local-gh` (one mapper serves both).
 */
import {
  defineProvider,
  type PluginContext,
  type ProviderEventType,
  type ProviderInstance,
} from "../../core/plugin-api/index.js";
import {
  createGhCli,
  defaultTypes,
  githubEventTypes,
  resolveGithubSubject,
  terminalSubjects,
  type GhCli,
} from "../github-common/index.js";
import { HookRegistry } from "./hooks.js";
import { ingressRoute } from "./ingress-route.js";
import { hookUrl, readSettings, writeSettings, type WebhookSettings } from "./settings.js";

export function createWebhookProvider(
  ctx: PluginContext,
  gh: GhCli = createGhCli(),
): ProviderInstance & { hooks: HookRegistry } {
  /**
   * The settings, read once and kept: every delivery to the open ingress route needs the secret
   * before its signature is checked, and `configure` (which drops the copy) is their only writer.
   */
  let cached: Promise<WebhookSettings> | undefined;
  const settings = () =>
    (cached ??= readSettings(ctx.service("credentials")).catch((err: unknown) => {
      cached = undefined;
      throw err;
    }));
  const hooks = new HookRegistry(gh, settings, ctx.logger);
  let eventTypes: ProviderEventType[] | undefined;
  return {
    hooks,
    defaultTypes,
    terminalSubjects,
    resolveSubject: resolveGithubSubject,
    eventTypes: () =>
      (eventTypes ??= githubEventTypes({
        preferWhenReady:
          "a GitHub webhook secret is configured (svc sentinel providers setup webhook --secret secret, or the MCP tool setup_sentinel_provider)",
      })),
    async readiness() {
      const s = await settings();
      const missing = [
        !s.secret && ["a secret", "--secret secret"],
        !s.publicBaseUrl && [
          "a public base URL (to register repository hooks through gh)",
          "--set publicBaseUrl=https://…",
        ],
      ].filter((m) => m !== false);
      const errors = Object.fromEntries(hooks.errors);
      return {
        ready: Boolean(s.secret),
        detail: missing.length
          ? `not set: ${missing.map(([what]) => what).join(", ")}; set ${missing.length === 1 ? "it" : "them"} with ` +
            `svc sentinel providers setup webhook ${missing.map(([, flag]) => flag).join(" ")} (or the MCP tool setup_sentinel_provider, provider webhook)`
          : `receiving at ${hookUrl(s.publicBaseUrl!)}; ${hooks.registered().length} repository hook(s) registered`,
        secretSet: Boolean(s.secret),
        publicBaseUrl: s.publicBaseUrl ?? null,
        watchedRepos: hooks.watchedRepos(),
        registeredHooks: hooks.registered(),
        ...(Object.keys(errors).length ? { hookErrors: errors } : {}),
      };
    },
    async configure(input) {
      try {
        await writeSettings(ctx.service("credentials"), input);
      } finally {
        cached = undefined;
      }
      await hooks.sync();
      const s = await settings();
      return {
        secretSet: Boolean(s.secret),
        publicBaseUrl: s.publicBaseUrl ?? null,
        hookUrl: s.publicBaseUrl ? hookUrl(s.publicBaseUrl) : null,
        registeredHooks: hooks.registered(),
      };
    },
    watch: (sentinel) => hooks.watch(sentinel),
    unwatch: (sentinel) => hooks.unwatch(sentinel),
    async start() {
      if (!ctx.hasService("routes")) return;
      ctx.service("routes").add(
        ingressRoute({
          secret: async () => (await settings()).secret,
          ingress: () => ctx.service("sentinels"),
          logger: ctx.logger,
          now: () => ctx.clock.now(),
        }),
      );
    },
  };
}

export default defineProvider({
  kind: "webhook",
  description: "Receives GitHub webhooks (HMAC-verified) and registers repository hooks through gh",
  setup: (ctx) => createWebhookProvider(ctx),
});
