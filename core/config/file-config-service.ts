import { dirname } from "node:path";
import type { Logger } from "../runtime/logger.js";
import type { ConfigService, ConfigSnapshot } from "./config-service.js";
import { loadConfigFile } from "./load.js";
import { resolveConfig, type ConfigFlags } from "./resolve.js";

/** A {@link ConfigService} over `$SVC_HOME/config.json`. */
export class FileConfigService implements ConfigService {
  private snapshot!: ConfigSnapshot;
  private readonly listeners = new Set<(s: ConfigSnapshot) => void>();

  private constructor(
    private readonly path: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly flags: ConfigFlags,
    private readonly logger?: Logger,
  ) {}

  /** Loads the file; a bad file at first load is an error (nothing good to fall back to). */
  static async open(
    path: string,
    env: NodeJS.ProcessEnv,
    flags: ConfigFlags = {},
    logger?: Logger,
  ): Promise<FileConfigService> {
    const svc = new FileConfigService(path, env, flags, logger);
    svc.snapshot = await svc.read();
    return svc;
  }

  current(): ConfigSnapshot {
    return this.snapshot;
  }

  async reload(): Promise<{ ok: true; snapshot: ConfigSnapshot } | { ok: false; error: Error }> {
    try {
      this.snapshot = await this.read();
    } catch (error) {
      this.logger?.warn(
        "config.json is invalid; the daemon keeps its last good configuration until the file is fixed",
        {
          path: this.path,
          error: (error as Error).message,
        },
      );
      return { ok: false, error: error as Error };
    }
    for (const w of this.snapshot.warnings) this.logger?.warn(w);
    for (const l of this.listeners) l(this.snapshot);
    return { ok: true, snapshot: this.snapshot };
  }

  onChange(listener: (snapshot: ConfigSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async read(): Promise<ConfigSnapshot> {
    const file = await loadConfigFile(this.path);
    const { effective, warnings, sources, profile } = resolveConfig(
      file.config,
      this.env,
      this.flags,
      dirname(this.path),
    );
    return {
      raw: file.raw,
      effective,
      warnings: [...file.warnings, ...warnings],
      sources,
      path: this.path,
      exists: file.exists,
      ...(profile !== undefined ? { profile } : {}),
    };
  }
}
