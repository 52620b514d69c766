#!/usr/bin/env node
/**
 * The `svc` entry point. `--version` answers before anything heavy is imported (cold start);
 * everything else goes through the commander program, whose verbs import their work lazily.
 */
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const { SVC_VERSION } = await import("../version.js");
  process.stdout.write(SVC_VERSION + "\n");
} else {
  // `svc … | head -1`: the reader went away; stop quietly instead of an EPIPE stack trace.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
    throw err;
  });
  const { runCli } = await import("./program.js");
  process.exitCode = await runCli(argv);
}
