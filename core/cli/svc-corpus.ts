#!/usr/bin/env node
/** The separate `svc-corpus` binary (starter corpus presets; named so that it cannot clash with another tool's `corpus`). */
const { runCorpusCli } = await import("./corpus-program.js");
process.exitCode = await runCorpusCli(process.argv.slice(2));
