import { delimiter, isAbsolute, join } from "node:path";
import { accessSync, constants } from "node:fs";
import { ACP_CATALOG, type AcpRecipe } from "../../config/acp-catalog.js";

export interface AcpListingRow {
  slug: string;
  /** Who wins: `package` (an @svc/adapter-<slug> package), `config` (acpAgents) or `catalog`. */
  source: "package" | "config" | "catalog";
  /** The sources this slug also has that lose to `source`. */
  shadows: Array<"config" | "catalog">;
  name: string;
  description?: string;
  bin?: string;
  args?: string[];
  package?: string;
  onPath?: boolean;
  install_hint?: string;
  resumable?: boolean;
}

/** Which adapter each slug resolves to (SPEC.md: package, then config, then catalog), and what it shadows. */
export function acpListing(
  acpAgents: Record<string, AcpRecipe>,
  packages: Array<{ kind: string; package: string; description?: string }>,
  env: NodeJS.ProcessEnv = process.env,
): AcpListingRow[] {
  const slugs = new Set([...packages.map((p) => p.kind), ...Object.keys(acpAgents), ...Object.keys(ACP_CATALOG)]);
  const rows: AcpListingRow[] = [];
  for (const slug of [...slugs].sort()) {
    const pkg = packages.find((p) => p.kind === slug);
    const cfg = acpAgents[slug];
    const cat = ACP_CATALOG[slug];
    const recipe = cfg ?? cat;
    const source = pkg ? "package" : cfg ? "config" : "catalog";
    const shadows = [
      ...(pkg && cfg ? (["config"] as const) : []),
      ...((pkg || cfg) && cat ? (["catalog"] as const) : []),
    ];
    if (pkg) {
      rows.push({ slug, source, shadows, name: slug, description: pkg.description, package: pkg.package });
      continue;
    }
    const onPath = isOnPath(recipe!.bin, env);
    rows.push({
      slug,
      source,
      shadows,
      name: recipe!.name ?? slug,
      ...(recipe!.description ? { description: recipe!.description } : {}),
      bin: recipe!.bin,
      args: recipe!.bin_args ?? [],
      onPath,
      ...(!onPath && (recipe!.install_hint ?? cat?.install_hint)
        ? { install_hint: recipe!.install_hint ?? cat?.install_hint }
        : {}),
      ...(recipe!.resumable ? { resumable: true } : {}),
    });
  }
  return rows;
}

export function isOnPath(bin: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const candidates = bin.includes("/")
    ? [isAbsolute(bin) ? bin : join(process.cwd(), bin)]
    : (env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, bin));
  return candidates.some((p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
