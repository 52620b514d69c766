import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import SlowFirstSequencer from "./test/support/slow-first-sequencer.js";

// Test receivers use a certificate signed by this test CA; Node trusts it through its normal
// mechanism in every worker and in every daemon process the tests start.
process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL("./test/fixtures/tls/ca.crt", import.meta.url));

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/setup.ts"],
    pool: "forks",
    // One worker process runs many files (modules from node_modules stay loaded between them):
    // about 0.3 s of CPU saved per file. Tests restore what they change (env, timers, mocks).
    isolate: false,
    // Three files at once even on 2 cores (vitest's default is cores - 1, so 1 here): most of the
    // suite waits on real child processes, git, fsync and timers, not on the CPU. On the 2-core
    // machine beside other work: 1 worker 761 s, 2 workers 835 s isolated / 570 s not, 3 workers
    // 507 s (CPU busy 76 % of the time).
    maxWorkers: 3,
    // Generous: a guard against hangs, not a speed check. A contributor's machine is busy (two
    // suites at once on 2 cores, say) and many tests run the CLI or the daemon as real processes.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Slowest files first (from test/support/durations.json), so no long file is the last to start.
    sequence: { sequencer: SlowFirstSequencer },
  },
});
