/**
 * The plugin calls around a sentinel's life: its target instance when loaded, the provider's
 * `watch`/`unwatch` and the target's `removed`/`expired`. A failing hook is logged, never thrown.
 */
import type { TargetInstance } from "../plugin-api/target.js";
import type { Logger } from "../runtime/logger.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { SentinelRecord } from "./service.js";

const TARGET_HOOK_FAILED = { removed: "target removal hook failed", expired: "target expiry hook failed" } as const;

export class SentinelHooks {
  constructor(
    private readonly plugins: SentinelPlugins,
    private readonly logger: Logger,
  ) {}

  /** The target plugin of `rec`, or undefined when it is not loaded. */
  targetOf(rec: SentinelRecord): Promise<TargetInstance | undefined> {
    return this.plugins.target(rec.spec.target.kind).catch(() => undefined);
  }

  async provider(rec: SentinelRecord, hook: "watch" | "unwatch"): Promise<void> {
    const provider = await this.plugins.provider(rec.spec.provider ?? "").catch(() => undefined);
    await provider?.[hook]?.(rec).catch((err: Error) =>
      this.logger.warn(`provider ${hook} failed`, {
        sentinel: rec.id,
        provider: rec.spec.provider,
        error: err.message,
      }),
    );
  }

  async target(rec: SentinelRecord, hook: "removed" | "expired"): Promise<void> {
    const target = await this.targetOf(rec);
    await target?.[hook]?.(rec).catch((err: Error) =>
      this.logger.warn(TARGET_HOOK_FAILED[hook], { sentinel: rec.id, error: err.message }),
    );
  }
}
