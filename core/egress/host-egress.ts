/**
 * The host service `"egress"`: one gate for every plugin, following the effective
 * `webhooks.allowSubnets`. A thin facade over {@link createEgress}: when the list differs from the
 * one the current client was built with, the next request (or {@link HostEgress.refresh}) builds a
 * new client and closes the old one (in-flight requests on it finish first).
 */
import type { Egress, EgressResponse } from "../plugin-api/egress.js";
import type { Logger } from "../runtime/logger.js";
import { createEgress } from "./egress.js";
import type { Resolver } from "./resolver.js";

export interface HostEgress extends Egress {
  /**
   * Builds the client now when none exists or the list changed; the build logs the list's
   * warnings (the daemon calls this at start and on every config reload).
   */
  refresh(): void;
  /** The `webhooks.allowSubnets` the current client was built with (`undefined` before the first build). */
  readonly allowSubnets: readonly string[] | undefined;
}

export interface HostEgressOptions {
  /**
   * The effective `webhooks.allowSubnets`, read on every request. A changed list must come as a
   * new array (configuration is replaced on reload, never mutated): the same array is taken as
   * unchanged without looking at its entries.
   */
  allowSubnets: () => readonly string[];
  resolver?: Resolver;
  logger?: Logger;
}

export function createHostEgress(options: HostEgressOptions): HostEgress {
  let current: { source: readonly string[]; key: string; list: readonly string[]; egress: Egress } | undefined;

  const ensure = (): Egress => {
    const source = options.allowSubnets();
    // Per-attempt hot path: the same array as last time needs no copy and no comparison.
    if (current?.source === source) return current.egress;
    const list = [...source];
    const key = JSON.stringify(list);
    if (current?.key === key) {
      current.source = source;
      return current.egress;
    }
    const previous = current;
    if (previous)
      options.logger?.info("webhooks.allowSubnets changed: the egress gate uses the new list", {
        allowSubnets: list.join(", ") || "(none)",
      });
    current = {
      source,
      key,
      list,
      egress: createEgress({
        allowSubnets: list,
        ...(options.resolver ? { resolver: options.resolver } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      }),
    };
    if (previous) void previous.egress.close().catch(() => undefined);
    return current.egress;
  };

  return {
    get allowSubnets() {
      return current?.list;
    },
    refresh() {
      ensure();
    },
    post(url, init): Promise<EgressResponse> {
      return ensure().post(url, init);
    },
    async close() {
      const closing = current;
      current = undefined;
      await closing?.egress.close();
    },
  };
}
