import { SvcError } from "../errors.js";
import type { HostServices } from "../plugin-api/context.js";

/**
 * Named host services offered to plugins (`ctx.service("sentinels")`). Areas of the core provide
 * them as they start; plugins look them up when they need them, so setup order does not matter.
 */
export class ServiceDirectory {
  private readonly services = new Map<string, unknown>();

  provide<K extends keyof HostServices & string>(name: K, service: HostServices[K]): void {
    this.services.set(name, service);
  }

  has(name: string): boolean {
    return this.services.has(name);
  }

  get<K extends keyof HostServices & string>(name: K): HostServices[K] {
    if (!this.services.has(name)) {
      throw new SvcError(
        "unavailable",
        `host service "${name}" is not available in this process (offered: ${[...this.services.keys()].join(", ") || "none"})`,
      );
    }
    return this.services.get(name) as HostServices[K];
  }
}
