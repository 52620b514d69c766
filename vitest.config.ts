import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Test receivers use a certificate signed by this test CA; Node trusts it through its normal
// mechanism in every worker and in every daemon process the tests start.
process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL("./test/fixtures/tls/ca.crt", import.meta.url));

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/setup.ts"],
    pool: "forks",
    // Two files at once even on 2 cores (vitest's default is cores - 1, so 1 here): most of the
    // suite waits on real child processes, git and fsync, not on the CPU. 761 s with one worker.
    maxWorkers: 2,
    // Generous: a guard against hangs, not a speed check. A contributor's machine is busy (two
    // suites at once on 2 cores, say) and many tests run the CLI or the daemon as real processes.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["test/support/global-setup.ts"],
  },
});
