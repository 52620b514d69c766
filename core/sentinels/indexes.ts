/** The matcher index of each provider: which active sentinels an event of that provider matches. */
import type { Logger } from "../runtime/logger.js";
import { SentinelIndex } from "./matcher.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { SentinelRecord } from "./service.js";
import { defaultProvider } from "./validate.js";

export class SentinelIndexes {
  private readonly byProvider = new Map<string, SentinelIndex>();

  constructor(
    private readonly plugins: SentinelPlugins,
    private readonly logger: Logger,
  ) {}

  /** The index of `provider`, if a sentinel of it was ever indexed. */
  of(provider: string): SentinelIndex | undefined {
    return this.byProvider.get(provider);
  }

  /** Indexes the clauses of `rec`; clauses without `types` take the provider's default types. */
  async add(rec: SentinelRecord): Promise<void> {
    const kind = rec.spec.provider ?? defaultProvider(rec.spec.match);
    const provider = await this.plugins.provider(kind).catch(() => undefined);
    if (!provider) this.logger.warn("sentinel provider is not loaded", { sentinel: rec.id, provider: kind });
    let index = this.byProvider.get(kind);
    if (!index) this.byProvider.set(kind, (index = new SentinelIndex()));
    index.add(
      rec.id,
      rec.spec.match.map((c) => ({
        sentinelId: rec.id,
        subject: c.subject,
        types: c.types ?? provider?.defaultTypes(c.subject) ?? ["*"],
      })),
    );
  }

  remove(rec: SentinelRecord): void {
    this.byProvider.get(rec.spec.provider ?? "")?.remove(rec.id);
  }
}
