/**
 * Tests that run the real CLI or daemon use the compiled `dist/` (the test script builds first).
 * Fail fast with a clear message when it is missing.
 */
import { existsSync } from "node:fs";
import { CLI_PATH } from "./paths.js";

export default function setup(): void {
  if (!existsSync(CLI_PATH)) {
    throw new Error(`${CLI_PATH} is missing: run \`npm run build\` first (\`npm test\` does)`);
  }
}
