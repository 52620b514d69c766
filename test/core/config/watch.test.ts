import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigFileWatcher } from "../../../core/config/watch.js";
import { writeFileDurable } from "../../../core/storage/atomic-write.js";
import { makeTempHome } from "../../support/cli.js";

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("ConfigFileWatcher", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let watcher: ConfigFileWatcher | undefined;
  beforeEach(async () => (home = await makeTempHome()));
  afterEach(async () => {
    watcher?.stop();
    await home.cleanup();
  });

  it("sees a file replaced by rename (atomic write)", async () => {
    const file = join(home.home, "config.json");
    let changes = 0;
    watcher = new ConfigFileWatcher(file, () => changes++, { debounceMs: 50, pollMs: 60_000 });
    await watcher.start();
    for (let i = 0; i < 5; i++) await writeFileDurable(file, JSON.stringify({ i }));
    await until(() => changes >= 1, "a change");
  });

  it("falls back to the periodic stat where no watch is possible (here: the directory appears later)", async () => {
    const dir = join(home.home, "later");
    const file = join(dir, "config.json");
    let changes = 0;
    watcher = new ConfigFileWatcher(file, () => changes++, { debounceMs: 10, pollMs: 20 });
    await watcher.start();
    await mkdir(dir);
    await writeFileDurable(file, "{}");
    await until(() => changes === 1, "the polled change");
  });

  it("reports nothing after stop", async () => {
    const file = join(home.home, "config.json");
    let changes = 0;
    watcher = new ConfigFileWatcher(file, () => changes++, { debounceMs: 10, pollMs: 20 });
    await watcher.start();
    watcher.stop();
    await writeFileDurable(file, "{}");
    await new Promise((r) => setTimeout(r, 100));
    expect(changes).toBe(0);
  });
});
