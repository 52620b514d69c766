/**
 * Injected ENOSPC for write-site tests: every way svc writes file data (FileHandle `write`,
 * `writev`, `writeFile`, `appendFile`, and `fs.write`, which write-file-atomic uses) counts its
 * calls, and once armed at k, the k-th write and every later one fail with ENOSPC, as a disk that
 * filled up stays full, until {@link Enospc.free}. Nothing else (reads, renames, fsyncs) is changed.
 */
import fs from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Enospc {
  /** Writes counted since the last {@link arm} or {@link count}. */
  readonly writes: number;
  /** Counts writes without failing any. */
  count(): void;
  /** The k-th write from now (1-based) and all later ones fail. */
  arm(k: number): void;
  /** Space freed: writes succeed again. */
  free(): void;
  /** Puts the real functions back. */
  restore(): void;
}

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error("ENOSPC: no space left on device, write"), {
    code: "ENOSPC",
    errno: -28,
    syscall: "write",
  });
}

export async function installEnospc(): Promise<Enospc> {
  const probe = await open(join(tmpdir(), `svc-enospc-probe-${process.pid}`), "w");
  const proto = Object.getPrototypeOf(probe) as Record<string, (...args: unknown[]) => Promise<unknown>>;
  await probe.close();
  await fs.promises.rm(join(tmpdir(), `svc-enospc-probe-${process.pid}`), { force: true });
  const state = { writes: 0, failFrom: Infinity };
  const full = () => ++state.writes >= state.failFrom;
  const originals = {
    write: proto.write!,
    writev: proto.writev!,
    writeFile: proto.writeFile!,
    appendFile: proto.appendFile!,
    fsWrite: fs.write,
  };
  for (const name of ["write", "writev", "writeFile", "appendFile"] as const) {
    const real = originals[name];
    proto[name] = function (this: unknown, ...args: unknown[]) {
      return full() ? Promise.reject(enospc()) : real.apply(this, args);
    };
  }
  (fs as { write: unknown }).write = (...args: unknown[]) => {
    if (full()) {
      const cb = args.at(-1) as (err: Error) => void;
      process.nextTick(() => cb(enospc()));
      return;
    }
    return (originals.fsWrite as (...a: unknown[]) => void).apply(fs, args);
  };
  return {
    get writes() {
      return state.writes;
    },
    count() {
      state.writes = 0;
      state.failFrom = Infinity;
    },
    arm(k) {
      state.writes = 0;
      state.failFrom = k;
    },
    free() {
      state.failFrom = Infinity;
    },
    restore() {
      for (const name of ["write", "writev", "writeFile", "appendFile"] as const) proto[name] = originals[name];
      (fs as { write: unknown }).write = originals.fsWrite;
    },
  };
}

/**
 * Runs `scenario` on a fresh in-memory home once to count its writes, then once for each write k
 * with the k-th and every later write failing; `check` then runs on that home with space freed.
 * Returns the number of write sites exercised.
 */
export async function atEveryWrite<T>(
  fault: Enospc,
  makeHome: () => Promise<{ home: string; cleanup(): Promise<void> }>,
  scenario: (home: string, arm: () => void) => Promise<T>,
  check: (home: string, result: T, k: number) => Promise<void>,
): Promise<number> {
  const dry = await makeHome();
  await scenario(dry.home, () => fault.count());
  const writes = fault.writes;
  await dry.cleanup();
  for (let k = 1; k <= writes; k++) {
    const { home, cleanup } = await makeHome();
    try {
      const result = await scenario(home, () => fault.arm(k));
      fault.free();
      await check(home, result, k);
    } finally {
      fault.free();
      await cleanup();
    }
  }
  return writes;
}
