import type { Command } from "commander";
import { usageError } from "../output.js";

/** `svc adapters ls|install|rm|init`, the old name `svc plugins …`, and `svc install runtime-profile/<slug>`. */
export function registerAdapters(program: Command): void {
  addAdapterVerbs(
    program
      .command("adapters")
      .description("Adapter packages: list, install, remove (renamed from `plugins` in 0.20.0)"),
    false,
  );
  addAdapterVerbs(program.command("plugins").description("Renamed to `adapters` in 0.20.0 (still works)"), true);

  program
    .command("install")
    .description("Install a package into the tool's install location")
    .argument("<what>", "runtime-profile/<slug>")
    .option("--package <name>", "package to install (default: profileAliases[slug], else @svc/runtime-profile-<slug>)")
    .action(async (what: string, opts: { package?: string }) => {
      const m = /^runtime-profile\/([a-z0-9][a-z0-9-]*)$/.exec(what);
      if (!m)
        throw usageError(`svc install expects runtime-profile/<slug> (a lower-case slug), got ${JSON.stringify(what)}`);
      const { installRuntimeProfile } = await import("../adapters/runtime-profile.js");
      await installRuntimeProfile(m[1]!, opts.package);
    });
}

function addAdapterVerbs(group: Command, renamed: boolean): void {
  if (renamed) {
    group.hook("preAction", () => {
      process.stderr.write("notice: `svc plugins` was renamed to `svc adapters` in 0.20.0; use `svc adapters …`\n");
    });
  }
  group
    .command("ls")
    .alias("list")
    .description(
      "List built-in plugins and adapter packages: where each resolved, what it provides, which kinds it wins or lost, and failures",
    )
    .option("--json", "machine-readable output")
    .option("--load", "also import each plugin and check its shape (runs plugin code); exit 1 when any failed")
    .action(async (opts: { json?: boolean; load?: boolean }) => {
      const { failIfNotLoaded, listAdapters, printListing } = await import("../adapters/ls.js");
      const listing = await listAdapters({ load: opts.load === true });
      printListing(listing, opts.json === true);
      failIfNotLoaded(listing);
    });
  group
    .command("install")
    .description(
      "npm install a package (name, folder or tarball) into the install location, validate its manifest, load it in a scratch host (import, shape, setup within 10 s), and append it to config adapters; exit 1 and roll back when it does not load",
    )
    .argument("<spec>", "an npm spec: name[@range], ./folder, or ./package.tgz")
    .action(async (spec: string) => {
      const { installPackage } = await import("../adapters/install.js");
      await installPackage(spec, { manifest: true });
    });
  group
    .command("init")
    .description(
      "Scaffold a new adapter package (a provider and/or a target, and a test that runs it in the real daemon)",
    )
    .argument("<dir>", "folder to create (empty or missing); its name is the package name unless --name")
    .option("--provider <kind>", "scaffold a provider of this kind")
    .option(
      "--target <kind>",
      "scaffold a target of this kind (no kind flag: a provider <name> and a target <name>-log)",
    )
    .option("--redactor <kind>", "scaffold a redactor of this kind (defaults.traceRedactor; docs/redaction.md)")
    .option("--typescript", "TypeScript sources under src/ with a build step (default: plain JavaScript, no build)")
    .option("--name <package>", "npm package name (default: the folder's name)")
    .action(
      async (
        dir: string,
        opts: { provider?: string; target?: string; redactor?: string; typescript?: boolean; name?: string },
      ) => {
        const { initPackage } = await import("../adapters/init.js");
        initPackage(dir, opts);
      },
    );
  group
    .command("rm")
    .alias("remove")
    .description("Remove a package id from config adapters and uninstall it from the install location")
    .argument("<id>", "package id as listed in adapters")
    .action(async (id: string) => {
      const { removeAdapter } = await import("../adapters/rm.js");
      await removeAdapter(id);
    });
}
