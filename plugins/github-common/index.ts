/** The GitHub vocabulary and payload mapper shared by the `local-gh` and `webhook` providers. */
export * from "./subjects.js";
export * from "./map-event.js";
export * from "./vocabulary.js";
export * from "./gh-cli.js";
export * from "./event-types.js";
