import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { checkHostRange, PhaseError, validateManifest } from "../../../core/plugin-host/manifest.js";
import {
  adapterManifestSchema,
  corpusPresetManifestSchema,
  manifestJsonSchemas,
} from "../../../core/plugin-host/manifest-schema.js";
import { REPO_ROOT } from "../../support/paths.js";

const valid = {
  schema: "svc/adapter/v1",
  svc: "^0.20",
  plugins: [{ type: "provider", kind: "jira", entry: "./dist/jira.js" }],
};

describe("svc/adapter/v1 manifest", () => {
  it("the JSON Schemas in manifests/ are the ones generated from the zod schemas", () => {
    for (const [name, schema] of Object.entries(manifestJsonSchemas())) {
      const onDisk = JSON.parse(readFileSync(join(REPO_ROOT, "manifests", name), "utf8"));
      expect(
        onDisk,
        `manifests/${name} is stale: run \`npm run build && node dist/core/plugin-host/write-schemas.js\``,
      ).toEqual(schema);
    }
  });

  it("every built-in manifest is a valid svc/adapter/v1 manifest that this version satisfies", () => {
    const dir = join(REPO_ROOT, "manifests/builtin");
    const kinds = readdirSync(dir).map((f) => {
      const m = validateManifest(JSON.parse(readFileSync(join(dir, f), "utf8")), f);
      checkHostRange(m);
      expect(m.plugins[0]!.entry).toMatch(/^\.\/dist\/plugins\/[a-z-]+\/index\.js$/);
      return `${m.plugins[0]!.type}:${m.plugins[0]!.kind}`;
    });
    expect(kinds.sort()).toEqual(
      [
        "adapter:acp",
        "adapter:terminal",
        "provider:agentpush",
        "provider:local-gh",
        "provider:sessions",
        "provider:webhook",
        "target:routine",
        "target:session",
        "target:webhook",
      ].sort(),
    );
  });

  it("every built-in manifest's description (what `svc adapters ls` shows) is its plugin's own description", async () => {
    const dir = join(REPO_ROOT, "manifests/builtin");
    for (const f of readdirSync(dir)) {
      const m = validateManifest(JSON.parse(readFileSync(join(dir, f), "utf8")), f);
      for (const decl of m.plugins) {
        // The entry names the built file; the test reads its source, so it needs no build.
        const source = join(REPO_ROOT, decl.entry.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"));
        const plugin = ((await import(pathToFileURL(source).href)) as { default: { description?: string } }).default;
        expect(decl.description, `manifests/builtin/${f} (${decl.type} ${decl.kind})`).toBe(plugin.description);
        expect(decl.description, `manifests/builtin/${f}`).not.toMatch(/not implemented|experimental/i);
      }
    }
  });

  it("accepts the manifest DESIGN.md shows", () => {
    expect(adapterManifestSchema.parse(valid).plugins[0]!.kind).toBe("jira");
  });

  it.each([
    ["a wrong schema id", { ...valid, schema: "svc/adapter/v2" }, "schema"],
    ["no plugins", { ...valid, plugins: [] }, "plugins"],
    ["an unknown type", { ...valid, plugins: [{ type: "widget", kind: "x", entry: "./x.js" }] }, "plugins[0].type"],
    [
      "a kind that is not a slug",
      { ...valid, plugins: [{ type: "provider", kind: "Jira Cloud", entry: "./x.js" }] },
      "plugins[0].kind",
    ],
    [
      "an entry escaping the package",
      { ...valid, plugins: [{ type: "provider", kind: "x", entry: "./../x.js" }] },
      "plugins[0].entry",
    ],
    ["a bare entry", { ...valid, plugins: [{ type: "provider", kind: "x", entry: "x.js" }] }, "plugins[0].entry"],
    ["no host range", { schema: valid.schema, plugins: valid.plugins }, "svc"],
  ])("refuses %s, naming the path", (_what, raw, path) => {
    let err: unknown;
    try {
      validateManifest(raw, "pkg/package.json");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PhaseError);
    expect((err as PhaseError).phase).toBe("validate");
    expect((err as Error).message).toContain("pkg/package.json");
    expect((err as Error).message).toContain(`${path}:`);
  });

  it("checks the host range against the running version, prereleases included", () => {
    expect(() => checkHostRange({ ...valid, svc: "^0.20.0" } as never, "0.20.3")).not.toThrow();
    expect(() => checkHostRange({ ...valid, svc: ">=0.20.0" } as never, "0.21.0-beta.1")).not.toThrow();
    expect(() => checkHostRange({ ...valid, svc: "^1.0.0" } as never, "0.20.0")).toThrow(
      "needs svc ^1.0.0, but this is svc 0.20.0",
    );
    expect(() => checkHostRange({ ...valid, svc: "soon" } as never, "0.20.0")).toThrow(
      '"svc": "soon" is not a semver range',
    );
  });
});

describe("svc/corpus-preset/v1 manifest", () => {
  it("needs exactly one of directory or files, with paths inside the target", () => {
    const base = { schema: "svc/corpus-preset/v1", presets: [{ slug: "a", description: "d" }] };
    expect(corpusPresetManifestSchema.safeParse(base).success).toBe(false);
    expect(
      corpusPresetManifestSchema.safeParse({
        ...base,
        presets: [{ slug: "a", description: "d", directory: "./p", files: {} }],
      }).success,
    ).toBe(false);
    expect(
      corpusPresetManifestSchema.safeParse({
        ...base,
        presets: [{ slug: "a", description: "d", files: { "../x": "" } }],
      }).success,
    ).toBe(false);
    expect(
      corpusPresetManifestSchema.safeParse({
        ...base,
        presets: [{ slug: "a", description: "d", files: { "/etc/x": "" } }],
      }).success,
    ).toBe(false);
    expect(
      corpusPresetManifestSchema.safeParse({
        ...base,
        presets: [{ slug: "a", description: "d", files: { "docs/x.md": "" } }],
      }).success,
    ).toBe(true);
  });
});
