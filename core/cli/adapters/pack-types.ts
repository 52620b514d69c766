/**
 * The types-only package `@svc/plugin-api` (dist/plugin-api-types, plugin-host/write-types-package.ts)
 * as an npm tarball, for `svc adapters init --typescript` to put inside the package it writes: svc
 * is not on the public registry, so the scaffold names the tarball with a `file:` spec and
 * `npm install` there needs the registry only for public packages (typescript, zod, …).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SvcError } from "../../errors.js";
import { typesPackageDir } from "../../plugin-host/write-types-package.js";

/** Packs `from` (default: this svc's dist/plugin-api-types) with `npm pack` and writes the tarball to `to`. */
export function packTypesPackage(to: string, from = typesPackageDir()): void {
  if (!existsSync(join(from, "package.json"))) {
    throw new SvcError(
      "unavailable",
      `the types of @svc/plugin-api are missing from ${from} (in a checkout of svc, run npm run build first)`,
    );
  }
  const out = mkdtempSync(join(tmpdir(), "svc-plugin-api-pack-"));
  try {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", out], {
      cwd: from,
      encoding: "utf8",
      shell: process.platform === "win32",
    });
    if (r.error) throw new SvcError("unavailable", `cannot run npm to pack ${from}: ${r.error.message}`);
    if (r.status !== 0) {
      throw new SvcError("internal", `npm pack ${from} failed with exit code ${r.status}: ${r.stderr.trim()}`);
    }
    const [packed] = JSON.parse(r.stdout) as Array<{ filename: string }>;
    if (!packed || !existsSync(join(out, packed.filename))) {
      throw new SvcError("internal", `npm pack ${from} wrote no tarball into ${out}`);
    }
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(out, packed.filename), to);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
