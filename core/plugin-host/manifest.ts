/** Reading and validating an adapter manifest, with `fs` only (no plugin code runs). */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { issuesToDetails } from "../errors.js";
import { SVC_VERSION } from "../version.js";
import {
  ADAPTER_MANIFEST_FILE,
  ADAPTER_MANIFEST_KEY,
  adapterManifestSchema,
  type AdapterManifest,
} from "./manifest-schema.js";
import type { PackageJson } from "./resolve-package.js";
import type { LoadFailure } from "./registry.js";

/** A failure in one phase of loading a package. */
export class PhaseError extends Error {
  constructor(
    readonly phase: LoadFailure["phase"],
    message: string,
  ) {
    super(message);
  }
}

/**
 * The raw manifest of the package at `dir`: `svc-adapter.json` beside package.json wins over the
 * package.json key. `undefined` when the package declares neither.
 */
export function readRawManifest(dir: string, packageJson: PackageJson): { raw: unknown; file: string } | undefined {
  const standalone = join(dir, ADAPTER_MANIFEST_FILE);
  if (existsSync(standalone)) {
    try {
      return { raw: JSON.parse(readFileSync(standalone, "utf8")), file: standalone };
    } catch (err) {
      throw new PhaseError("manifest", `${standalone} is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (packageJson[ADAPTER_MANIFEST_KEY] === undefined) return undefined;
  return { raw: packageJson[ADAPTER_MANIFEST_KEY], file: `${join(dir, "package.json")} key "${ADAPTER_MANIFEST_KEY}"` };
}

/** Validates a raw manifest against `svc/adapter/v1`; the message lists each problem with its path. */
export function validateManifest(raw: unknown, where: string): AdapterManifest {
  const parsed = adapterManifestSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = issuesToDetails(parsed.error.issues).map((d) => `${d.path}: ${d.message}`);
  throw new PhaseError("validate", `invalid svc/adapter/v1 manifest in ${where}: ${problems.join("; ")}`);
}

/** Checks the manifest's `svc` range against the running version. */
export function checkHostRange(manifest: AdapterManifest, version = SVC_VERSION): void {
  const range = semver.validRange(manifest.svc);
  if (range === null)
    throw new PhaseError("host-range", `"svc": ${JSON.stringify(manifest.svc)} is not a semver range`);
  if (!semver.satisfies(version, range, { includePrerelease: true })) {
    throw new PhaseError("host-range", `needs svc ${manifest.svc}, but this is svc ${version}`);
  }
}

/** Reads, validates and range-checks the manifest of a resolved package (phases manifest → host-range). */
export function loadManifest(dir: string, packageJson: PackageJson, version = SVC_VERSION): AdapterManifest {
  const found = readRawManifest(dir, packageJson);
  if (!found) {
    throw new PhaseError(
      "manifest",
      `no adapter manifest: add a "${ADAPTER_MANIFEST_KEY}" key to package.json or a ${ADAPTER_MANIFEST_FILE} beside it`,
    );
  }
  const manifest = validateManifest(found.raw, found.file);
  checkHostRange(manifest, version);
  return manifest;
}
