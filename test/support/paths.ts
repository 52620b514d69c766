import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLI_PATH = join(REPO_ROOT, "dist/core/cli/svc.js");
export const CORPUS_CLI_PATH = join(REPO_ROOT, "dist/core/cli/svc-corpus.js");
export const FIXTURES = join(REPO_ROOT, "test/fixtures");
