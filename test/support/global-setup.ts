/**
 * Tests that run the real CLI or daemon use the compiled `dist/` (the test script builds first).
 * Fail fast with a clear message when it is missing.
 */
import { existsSync } from "node:fs";
import { CLI_PATH } from "./paths.js";
import { postgresMissing } from "./postgres.js";

export default function setup(): void {
  if (!existsSync(CLI_PATH)) {
    throw new Error(`${CLI_PATH} is missing: run \`npm run build\` first (\`npm test\` does)`);
  }
  // Once, before any test file: Debian's PostgreSQL for the team-mode tests, installed here when
  // missing (as root), so two test files never run apt-get at once. Missing = those files skip.
  const missing = postgresMissing();
  if (missing) console.warn(missing);
}
