import { constants } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDurableAppend } from "../../../core/storage/durable-append.js";
import { makeTempHome } from "../../support/cli.js";

describe("openDurableAppend", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-durable-append-")));
  afterEach(() => cleanup());

  it("creates the file with the given mode and appends after what is there", async () => {
    const path = join(home, "j.log");
    const first = await openDurableAppend(path, 0o600);
    await first.handle.write("one\n");
    await first.sync();
    await first.handle.close();
    const second = await openDurableAppend(path, 0o600);
    await second.handle.write("two\n");
    await second.sync();
    await second.handle.close();
    expect(await readFile(path, "utf8")).toBe("one\ntwo\n");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it.runIf(process.platform === "linux")(
    "opens with O_APPEND and O_DSYNC, so each write is durable when it returns",
    async () => {
      const file = await openDurableAppend(join(home, "j.log"));
      try {
        const info = await readFile(`/proc/self/fdinfo/${file.handle.fd}`, "utf8");
        const flags = parseInt(/^flags:\s+(\d+)/m.exec(info)![1]!, 8);
        expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
        expect(flags & constants.O_APPEND).toBe(constants.O_APPEND);
      } finally {
        await file.handle.close();
      }
    },
  );
});
