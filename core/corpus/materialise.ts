/** Writing a corpus preset into a directory; existing files are refused unless forced. */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { SvcError } from "../errors.js";
import type { AvailablePreset } from "./presets.js";

export interface MaterialiseResult {
  dir: string;
  written: string[];
}

export async function materialise(
  found: AvailablePreset,
  targetDir: string,
  force = false,
): Promise<MaterialiseResult> {
  const dir = resolve(targetDir);
  const files = await presetFiles(found);
  const outside = [...files.keys()].filter((p) => !inside(dir, join(dir, p)));
  if (outside.length)
    throw new SvcError(
      "invalid_input",
      `preset ${found.preset.slug} would write outside ${dir}: ${outside.join(", ")}`,
    );
  const existing = [...files.keys()].filter((p) => existsSync(join(dir, p)));
  if (existing.length && !force) {
    throw new SvcError(
      "conflict",
      `${dir} already has ${existing.join(", ")}; nothing was written (use --force to overwrite)`,
    );
  }
  for (const [rel, content] of files) {
    const path = join(dir, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
  return { dir, written: [...files.keys()] };
}

async function presetFiles(found: AvailablePreset): Promise<Map<string, string | Buffer>> {
  const { preset, source } = found;
  const out = new Map<string, string | Buffer>();
  if (preset.files) {
    for (const [rel, text] of Object.entries(preset.files)) out.set(rel.split(/[\\/]/).join(sep), text);
    return out;
  }
  const root = resolve(source.dir, preset.directory!);
  if (!inside(source.dir, root))
    throw new SvcError(
      "invalid_input",
      `preset ${preset.slug}: directory ${preset.directory} is outside ${source.package}`,
    );
  if (!existsSync(root))
    throw new SvcError("not_found", `preset ${preset.slug}: ${source.package} has no folder ${preset.directory}`);
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = join(entry.parentPath, entry.name);
    out.set(relative(root, abs), await readFile(abs));
  }
  return out;
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !resolve(parent, rel).startsWith("..");
}
