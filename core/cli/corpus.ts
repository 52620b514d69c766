#!/usr/bin/env node
/** The separate `corpus` binary (starter presets). */
const { runCorpusCli } = await import("./corpus-program.js");
process.exitCode = await runCorpusCli(process.argv.slice(2));
