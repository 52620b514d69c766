/** Debian's Chromium for the browser tests, launched headless (installed by ensure-chromium.sh when missing). */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
// No background traffic, no sandbox as root, a fresh profile (Playwright makes one).
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    // Never pass without a browser: install it (as root) or fail here with the script's message.
    const r = spawnSync("bash", [join(__dirname, "ensure-chromium.sh")], {
      stdio: "inherit",
      timeout: 600_000,
    });
    if (r.status !== 0)
      throw new Error(`${CHROMIUM} is missing and could not be installed (test/support/ensure-chromium.sh)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}
