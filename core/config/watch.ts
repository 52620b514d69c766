/**
 * Watches `$SVC_HOME/config.json` for changes: `fs.watch` on the directory (the file is replaced
 * by rename on every write, so watching the file itself would lose track), plus a cheap periodic
 * stat as a fallback for filesystems where watch events do not arrive. Changes are debounced.
 */
import { watch, type FSWatcher } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname } from "node:path";

export interface ConfigWatcherOptions {
  debounceMs?: number;
  pollMs?: number;
}

export class ConfigFileWatcher {
  private watcher?: FSWatcher;
  private poll?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private signature = "";
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly onChange: () => void,
    private readonly options: ConfigWatcherOptions = {},
  ) {}

  async start(): Promise<void> {
    this.signature = await this.currentSignature();
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name) this.schedule();
      });
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No watch support here (or the directory is missing): the periodic stat still works.
    }
    this.poll = setInterval(() => void this.checkSignature(), this.options.pollMs ?? 2000);
    this.poll.unref();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.debounce);
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      void this.currentSignature().then((sig) => {
        this.signature = sig;
        if (!this.stopped) this.onChange();
      });
    }, this.options.debounceMs ?? 150);
    this.debounce.unref();
  }

  private async checkSignature(): Promise<void> {
    const sig = await this.currentSignature();
    if (sig !== this.signature) {
      this.signature = sig;
      this.schedule();
    }
  }

  private async currentSignature(): Promise<string> {
    try {
      const s = await stat(this.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return "absent";
    }
  }
}
