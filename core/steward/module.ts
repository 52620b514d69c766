/**
 * The session steward in the daemon (docs/steward.md). Cheap until a judge is configured: the
 * module adds one route and one tool and listens to the event bus; the steward itself
 * (steward.ts: transcript, redaction, HTTP) loads at the first trigger that has a key to use.
 * Without a key that is said once in the log, at the first trigger.
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { STEWARD_MODEL_ACCESS } from "../llm-endpoint/module.js";
import { REDACTION } from "../redaction/redaction.js";
import { SESSIONS } from "../sessions/runtime.js";
import { CLOCK, CONFIG, DAEMON_EVENTS, LOGGER, ROUTES, TOOLS, resolve, type Token } from "../tokens.js";
import { judgeSettings } from "./judge-config.js";
import type { Steward } from "./steward.js";
import { stewardRoutes, stewardTools } from "./surface.js";
import { TRIGGERS } from "./triggers.js";

interface Held {
  steward?: Promise<Steward>;
  unsubscribe?: () => void;
  noKeySaid?: boolean;
}

const held = new WeakMap<DependencyContainer, Held>();

function optional<T>(c: DependencyContainer, tok: Token<T>): T | undefined {
  return c.isRegistered(tok as never, true) ? resolve(c, tok) : undefined;
}

function load(c: DependencyContainer, h: Held): Promise<Steward> {
  h.steward ??= Promise.all([import("./steward.js"), import("../llm-endpoint/settings.js")]).then(
    ([{ Steward }, { JUDGE_CALL_ROLE }]) => {
      const clock = resolve(c, CLOCK);
      const config = resolve(c, CONFIG);
      return new Steward({
        config,
        sessions: resolve(c, SESSIONS),
        logger: resolve(c, LOGGER),
        now: () => clock.now(),
        redaction: resolve(c, REDACTION),
        sidecar: async () => {
          if (config.current().effective.features.llmEndpoint !== true) return undefined;
          const channel = await optional(c, STEWARD_MODEL_ACCESS)?.channel();
          return (
            channel && { url: channel.url, bearer: channel.token, model: `role:${JUDGE_CALL_ROLE}`, viaSidecar: true }
          );
        },
      });
    },
  );
  return h.steward;
}

export const stewardModule: DaemonModule = {
  name: "steward",
  async start(c: DependencyContainer) {
    const h: Held = {};
    held.set(c, h);
    const config = resolve(c, CONFIG);
    const logger = resolve(c, LOGGER);
    const judge = async (id: string) => (await load(c, h)).request(id);
    const routes = resolve(c, ROUTES);
    for (const r of stewardRoutes(judge)) routes.add(r);
    const tools = resolve(c, TOOLS);
    for (const t of stewardTools(judge)) tools.add(t);
    h.unsubscribe = resolve(c, DAEMON_EVENTS).subscribe((e) => {
      if (TRIGGERS[e.type] === undefined) return;
      if (!h.steward && !judgeSettings(config.current()).key) {
        if (!h.noKeySaid)
          logger.info(
            "steward: no judge key (extJudge.apiKey, or EXT_JUDGE_API_KEY in the daemon's environment): no session is judged; see docs/steward.md",
          );
        h.noKeySaid = true;
        return;
      }
      load(c, h)
        .then((s) => s.onEvent(e))
        .catch((err: Error) =>
          logger.error("steward: a trigger was not handled", { type: e.type, error: err.message }),
        );
    });
  },
  async stop(c: DependencyContainer) {
    const h = held.get(c);
    held.delete(c);
    h?.unsubscribe?.();
    await (await h?.steward?.catch(() => undefined))?.close();
  },
};
