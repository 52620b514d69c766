/**
 * Issue 13: `svc adapters install` installs into a prefix svc owns, `$SVC_HOME/adapters`, never
 * into svc's own folder; packages resolve from that prefix first, then from beside svc, then
 * from the cwd.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { installDir, resolutionBases, svcRoot } from "../../../core/plugin-host/locations.js";
import { REPO_ROOT } from "../../support/paths.js";

describe("adapter install and resolution locations", () => {
  it("installs under $SVC_HOME/adapters by default, not in svc's own folder", () => {
    expect(installDir({ SVC_HOME: "/tmp/h" })).toBe(join("/tmp/h", "adapters"));
    expect(installDir({ SVC_HOME: "/tmp/h" })).not.toBe(svcRoot());
    expect(svcRoot()).toBe(resolve(REPO_ROOT));
  });

  it("SVC_INSTALL_DIR overrides the prefix; blank is ignored", () => {
    expect(installDir({ SVC_HOME: "/tmp/h", SVC_INSTALL_DIR: "/opt/x" })).toBe("/opt/x");
    expect(installDir({ SVC_HOME: "/tmp/h", SVC_INSTALL_DIR: " " })).toBe(join("/tmp/h", "adapters"));
  });

  it("resolves from the prefix first, then beside svc, then the cwd", () => {
    expect(resolutionBases({ SVC_HOME: "/tmp/h" }, "/work/project")).toEqual([
      { from: "install", dir: join("/tmp/h", "adapters") },
      { from: "svc", dir: svcRoot() },
      { from: "cwd", dir: "/work/project" },
    ]);
    expect(resolutionBases({ SVC_HOME: "/tmp/h", SVC_INSTALL_DIR: svcRoot() }, "/p").map((b) => b.from)).toEqual([
      "install",
      "cwd",
    ]);
  });
});
