/**
 * The configuration's MCP tools: `config_get` (value and source, secrets redacted), `config_set`
 * (the CLI's rules: validated, refuses extJudge.apiKey; its arguments are not a command line, so
 * other secrets are taken) and the read-only `model_roles`.
 */
import { z } from "zod";
import { SvcError } from "../errors.js";
import type { ToolDef } from "../plugin-api/tools.js";
import type { ConfigService } from "./config-service.js";
import { lookupKey, modelRoleTable } from "./lookup.js";
import { holdsSecret, REDACTED } from "./secrets.js";
import { setConfigKey, unsetConfigKey } from "./write.js";
import { parseKey } from "./dotted-path.js";
import { isReachKey } from "./reach-keys.js";
import { authorize } from "../daemon/authorization.js";

const keyField = z.string().min(1).describe("Dotted key, e.g. daemon.port or models.review.small");

export function configTools(config: ConfigService): ToolDef[] {
  const configGet: ToolDef<{ key: typeof keyField }> = {
    name: "config_get",
    title: "Read a configuration value",
    description:
      "The effective value of a dotted config.json key and where it came from (flag, env VAR, profile NAME, config, default). Secrets are redacted. `models` gives the resolved role table.",
    inputSchema: { key: keyField },
    outputSchema: {
      key: z.string().describe("the key asked for"),
      value: z.unknown().optional().describe("the effective value (secrets redacted)"),
      source: z
        .string()
        .optional()
        .describe("where a leaf's value came from: flag, env VAR, profile NAME, config or default"),
      sources: z
        .record(z.string(), z.string().describe("where that leaf's value came from"))
        .optional()
        .describe("for a section: each leaf's source, keyed by its dotted key"),
    },
    readOnly: true,
    handler: ({ key }) => lookupKey(config.current(), key),
  };
  const setShape = {
    key: keyField,
    value: z
      .unknown()
      .optional()
      .describe("The new value (any JSON); omit together with unset: true to remove the key"),
    unset: z.boolean().optional().describe("Remove the key instead of setting it"),
  };
  const configSet: ToolDef<typeof setShape> = {
    name: "config_set",
    title: "Change a configuration value",
    description:
      "Set (or unset) one dotted key in config.json. The whole file is validated first; an invalid value changes nothing. Keys that widen reach (daemon.authToken/bind/port/allowedOrigins/allowedHosts, webhooks, adapters, acpAgents, terminalPresets, tunnel, pairing, profiles, extJudge, …) need the daemon's bearer token. extJudge.apiKey is not writable here (pipe it to `svc config set extJudge.apiKey` on stdin). A new config.json is created 0600; writing a secret to a file others can read adds a warning.",
    inputSchema: setShape,
    outputSchema: {
      key: z.string().describe("the key written"),
      value: z.unknown().optional().describe("the value written (secrets redacted)"),
      unset: z.boolean().optional().describe("true when the key was removed"),
      changed: z.boolean().describe("whether config.json changed"),
      warnings: z.array(z.string()).describe("e.g. an unknown model id or key"),
      applied: z.boolean().describe("whether the running daemon applied the new file"),
    },
    handler: async ({ key, value, unset }, ctx) => {
      authorize(isReachKey(parseKey(key)) ? "config.write-reach" : "config.write", ctx.principal);
      if (!unset && value === undefined)
        throw new SvcError("invalid_input", "config_set needs a value (or unset: true)");
      const path = config.current().path;
      const result = unset ? await unsetConfigKey(path, key) : await setConfigKey(path, key, value);
      const reload = await config.reload();
      const shown = holdsSecret(parseKey(key)) ? REDACTED : value;
      return {
        key,
        ...(unset ? { unset: true } : { value: shown }),
        changed: result.changed,
        warnings: result.warnings,
        applied: reload.ok,
      };
    },
  };
  const modelRoles: ToolDef = {
    name: "model_roles",
    title: "Model roles",
    description:
      "The resolved model role table (review.small, review.large, review.pr, judge.session and any configured role), each with its source: config or default. A role that does not resolve (a role: cycle, an undefined role) is in problems with the chain; the others still resolve.",
    inputSchema: {},
    outputSchema: {
      roles: z
        .record(
          z.string(),
          z
            .looseObject({
              model: z.string().describe("the model id the role resolves to"),
              source: z.string().describe("where the role's setting came from: config or default"),
            })
            .describe("one role's resolution"),
        )
        .describe("each role's model and source, keyed by role name (e.g. review.small)"),
      problems: z
        .record(z.string(), z.string())
        .optional()
        .describe("roles that do not resolve, each with why (naming the role: chain)"),
    },
    readOnly: true,
    handler: () => {
      const { roles, problems } = modelRoleTable(config.current());
      return { roles, ...(Object.keys(problems).length ? { problems } : {}) };
    },
  };
  return [configGet, configSet, modelRoles] as ToolDef[];
}
