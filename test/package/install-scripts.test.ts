/**
 * `npm ci` prints no install-scripts warning: every package in the lockfile that has an install
 * script is named in package.json's `allowScripts` (allowed or denied on purpose), so a new
 * dependency with one fails here instead of warning every contributor at their first install.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(new URL("package-lock.json", root), "utf8")) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

describe("install scripts", () => {
  it("every lockfile package with an install script is decided in allowScripts", () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    const undecided = withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== "boolean");
    expect(undecided).toEqual([]);
  });
});
