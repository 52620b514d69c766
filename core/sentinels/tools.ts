/**
 * The sentinel MCP tools (SPEC.md "Tools"): ToolDefs over the {@link SentinelService}, added to the
 * TOOLS table by {@link sentinelToolsModule}. `sentinel_watch` creates session targets only;
 * listings are the redacted projections; provider settings go to the provider's setup step and
 * are never shown back.
 */
import type { DependencyContainer } from "tsyringe";
import { z } from "zod";
import { SvcError } from "../errors.js";
import type { DaemonModule } from "../daemon/module.js";
import { redactLikelySecrets } from "../daemon/mcp/redact.js";
import { pluginInstance } from "../plugin-host/context.js";
import type { ToolDef } from "../plugin-api/tools.js";
import { PLUGINS, SENTINELS, TOOLS, resolve } from "../tokens.js";
import { untilSchema } from "./spec-schema.js";
import { authorize } from "../daemon/authorization.js";
import type { SentinelService } from "./service.js";

export interface SentinelToolDeps {
  service(): SentinelService;
  /** Turns `prUrl` into a subject through a provider's `resolveSubject` (the given one, else the first that accepts it). */
  resolvePrUrl(prUrl: string, provider?: string): Promise<string>;
}

const watchShape = {
  subject: z
    .string()
    .min(1)
    .optional()
    .describe("subject to watch, e.g. github:acme/api#42; a trailing * makes it a prefix"),
  prUrl: z
    .string()
    .url()
    .optional()
    .describe("a pull request URL, resolved to its subject by the provider (instead of subject)"),
  types: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe("event type globs; omitted: the provider's default types for the subject"),
  until: untilSchema.optional().describe("when watching stops; default {kind: subject_terminal}"),
  provider: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/)
    .optional()
    .describe("provider slug (local-gh, webhook, agentpush); default from the subject"),
  sessionId: z.string().min(1).describe("the session that receives matching events"),
  urgency: z.enum(["queue", "steer", "interrupt"]).optional().describe("how events are prompted into the session"),
  label: z.string().min(1).max(200).optional().describe("human-readable label"),
  group: z.string().min(1).max(200).optional().describe("fan-out group (descriptive)"),
  idempotencyKey: z
    .string()
    .optional()
    .describe(
      "makes the create safe to retry: the same key with the same arguments within 24 hours returns the sentinel it created (same id) and creates nothing; " +
        "with other arguments it is refused (idempotency_key_reused). 1-255 printable ASCII characters",
    ),
};

/** The sentinel projection (webhook secrets redacted), as the REST routes return it. */
const projection = z.looseObject({
  id: z.string().describe("snt_…"),
  status: z.string().describe("active or expired"),
  spec: z.looseObject({}).describe("the spec, target redacted"),
});

export function sentinelTools(deps: SentinelToolDeps): ToolDef[] {
  const watch: ToolDef<typeof watchShape> = {
    name: "sentinel_watch",
    title: "Watch events for a session",
    description:
      "Create a sentinel that delivers matching events into a session (session targets only). Give `subject` or `prUrl`, and `sessionId`.",
    inputSchema: watchShape,
    outputSchema: projection.shape,
    async handler(input, ctx) {
      if ((input.subject === undefined) === (input.prUrl === undefined)) {
        throw new SvcError("invalid_input", "give exactly one of subject or prUrl", {
          details: [
            {
              path: input.subject === undefined ? "subject" : "prUrl",
              message: "give exactly one of subject or prUrl",
            },
          ],
        });
      }
      // A given subject is normalized by the engine's validation, whose errors name match[0].subject.
      const subject = input.subject ?? (await deps.resolvePrUrl(input.prUrl!, input.provider));
      const spec = {
        match: [{ subject, ...(input.types ? { types: input.types } : {}) }],
        until: input.until ?? { kind: "subject_terminal" },
        target: { kind: "session", sessionId: input.sessionId, ...(input.urgency ? { urgency: input.urgency } : {}) },
        ...(input.provider ? { provider: input.provider } : {}),
        ...(input.label ? { label: input.label } : {}),
        ...(input.group ? { group: input.group } : {}),
      };
      return deps
        .service()
        .create(
          spec,
          ctx.principal,
          input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey },
        );
    },
  };
  const list: ToolDef<{}> = {
    name: "sentinel_list",
    description:
      "List all sentinels (webhook secrets are never returned: targets are shown in their redacted projection).",
    inputSchema: {},
    outputSchema: { sentinels: z.array(projection).describe("every sentinel, oldest first") },
    readOnly: true,
    handler: async () => ({ sentinels: await deps.service().list() }),
  };
  const unwatchShape = { id: z.string().min(1).describe("the sentinel id (snt_…)") };
  const unwatch: ToolDef<typeof unwatchShape> = {
    name: "sentinel_unwatch",
    description:
      "Stop and remove a sentinel. Removing one whose target is not a session (a webhook) needs the daemon's bearer token.",
    inputSchema: unwatchShape,
    outputSchema: { removed: z.string().describe("the removed sentinel's id") },
    async handler(input, ctx) {
      await removeSentinel(deps.service(), input.id, ctx.principal);
      return { removed: input.id };
    },
  };
  const pollNow: ToolDef<{}> = {
    name: "sentinel_poll_now",
    description: "Trigger an immediate poll cycle of every polling provider (and an expiry sweep).",
    inputSchema: {},
    outputSchema: { polled: z.array(z.string()).describe("the polling provider kinds that ran a cycle") },
    handler: () => deps.service().pollNow(),
  };
  const adapters: ToolDef<{}> = {
    name: "list_sentinel_adapters",
    description:
      "Report each loaded sentinel provider and whether it is ready (e.g. gh installed and authenticated, webhook secret set).",
    inputSchema: {},
    outputSchema: {
      providers: z
        .array(
          z.looseObject({
            kind: z.string().describe("the provider slug (local-gh, webhook, agentpush, ...)"),
            readiness: z
              .looseObject({
                ready: z.boolean().describe("whether the provider can collect events now"),
                detail: z.string().describe("what it needs, or how it collects them"),
              })
              .describe("whether the provider is ready, and why (not)"),
          }),
        )
        .describe("each loaded provider and its readiness"),
    },
    readOnly: true,
    handler: async () => ({ providers: await deps.service().providers() }),
  };
  const setupShape = {
    provider: z
      .string()
      .regex(/^[a-z][a-z0-9-]*$/)
      .describe("provider slug, e.g. webhook"),
    settings: z.record(z.string(), z.unknown()).describe("provider settings, e.g. {secret, publicBaseUrl} for webhook"),
  };
  const setup: ToolDef<typeof setupShape> = {
    name: "setup_sentinel_provider",
    description:
      "Configure a sentinel provider (a secret, an API key, a public base URL). Needs the daemon's bearer token. Secrets are stored in credentials.json (0600) and never shown back.",
    inputSchema: setupShape,
    outputSchema: {
      provider: z.string().describe("the provider configured"),
      configured: z.record(z.string(), z.unknown()).describe("what was set, secrets redacted"),
    },
    async handler(input, ctx) {
      authorize("provider.setup", ctx.principal);
      const summary = await deps.service().setupProvider(input.provider, input.settings);
      return { provider: input.provider, configured: redactLikelySecrets(summary) };
    },
  };
  return [watch, list, unwatch, pollNow, adapters, setup] as unknown as ToolDef[];
}

/** Removal, authorized by what the sentinel delivers to (operation sentinel.remove-session or -outbound). */
export async function removeSentinel(service: SentinelService, id: string, principal: string): Promise<void> {
  const view = service.get(id);
  if (view)
    authorize(view.spec.target.kind === "session" ? "sentinel.remove-session" : "sentinel.remove-outbound", principal);
  await service.remove(id);
}

/** `prUrl` resolution through the loaded providers' `resolveSubject`. */
function prUrlResolver(c: DependencyContainer): SentinelToolDeps["resolvePrUrl"] {
  return async (prUrl, provider) => {
    const kinds = provider ? [provider] : resolve(c, PLUGINS).kinds("provider");
    const reasons: string[] = [];
    for (const kind of kinds) {
      const instance = await pluginInstance(c, "provider", kind);
      if (!instance.resolveSubject) continue;
      try {
        return instance.resolveSubject({ prUrl });
      } catch (err) {
        reasons.push(`${kind}: ${(err as Error).message}`);
      }
    }
    throw new SvcError(
      "invalid_input",
      `prUrl could not be resolved by ${provider ? `provider ${provider}` : "any loaded provider"}${reasons.length ? ` (${reasons.join("; ")})` : ""}`,
      {
        details: [{ path: "prUrl", message: reasons[0] ?? "no provider resolves pull request URLs" }],
      },
    );
  };
}

/** Adds the sentinel tools to the TOOLS table; the service is resolved at call time. */
export const sentinelToolsModule: DaemonModule = {
  name: "sentinel-tools",
  async start(c) {
    const tools = resolve(c, TOOLS);
    for (const tool of sentinelTools({ service: () => resolve(c, SENTINELS), resolvePrUrl: prUrlResolver(c) }))
      tools.add(tool);
  },
};
