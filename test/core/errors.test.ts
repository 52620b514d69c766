import { describe, expect, it } from "vitest";
import { toPublicError, toSvcError } from "../../core/errors.js";

const errno = (code: string, message: string, path?: string) =>
  Object.assign(new Error(message), { code, ...(path ? { path } : {}) });

describe("a full disk is a clear 503, not an internal error", () => {
  it("ENOSPC and EDQUOT become unavailable, naming the file (not its directory) when the call had a path", () => {
    const withPath = toPublicError(
      errno(
        "ENOSPC",
        "ENOSPC: no space left on device, open '/home/someone/.svc/sentinels.json.tmp'",
        "/home/someone/.svc/sentinels.json.tmp",
      ),
    );
    expect(withPath.code).toBe("unavailable");
    expect(withPath.message).toBe(
      "the disk is full (ENOSPC writing sentinels.json.tmp): free space on the filesystem of svc's files ($SVC_HOME), then try again",
    );
    expect(toSvcError(errno("EDQUOT", "EDQUOT: disk quota exceeded, write")).message).toMatch(
      /^the disk quota is used up \(EDQUOT\): free space/,
    );
  });

  it("other system errors stay internal, their text kept from the caller", () => {
    const e = toPublicError(errno("EIO", "EIO: i/o error, write"));
    expect(e.code).toBe("internal");
    expect(e.message).not.toMatch(/EIO/);
  });
});
