#!/usr/bin/env node
/**
 * The `svc` entry point. `--version` answers before anything heavy is imported (cold start);
 * `svc status` and `svc sentinel list` take the fast path (fast-path.ts: no commander, no zod,
 * no undici); `svc serve` and `svc start` through a program holding only their verb group
 * (serve-program.ts); everything else goes through the commander program, whose verbs import their
 * work lazily. Node's compile cache is on where Node has one (compile-cache.ts).
 */
// Node 22.1+ has a compile cache; on older Node not even the module that turns it on is loaded.
if (Number(process.versions.node.split(".")[0]) >= 22) (await import("./compile-cache.js")).enableCompileCache();
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
  const { fastVerb, runFast } = await import("./fast-path.js");
  const fast = process.env.SVC_NO_FAST_PATH ? undefined : fastVerb(argv);
  if (fast) process.exitCode = await runFast(fast, argv);
  else if (argv[0] === "serve" || argv[0] === "start") {
    // The daemon's verbs: a program without the other verb groups (serve-program.ts).
    const { runServeCli } = await import("./serve-program.js");
    process.exitCode = await runServeCli(argv);
  } else {
    const { runCli } = await import("./program.js");
    process.exitCode = await runCli(argv);
  }
}
