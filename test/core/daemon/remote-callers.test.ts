/**
 * Who a caller beyond loopback is (auth.ts with remote-marker.ts) and what it may do
 * (authorization.ts): a marker with any key but this boot's is ignored, a pairing is let in by its
 * link whether or not daemon.authToken is set, a tunnel caller or a network caller only while it is
 * unset, each with read unless a pairing was given operate; a token makes anyone the owner.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { authenticate } from "../../../core/daemon/auth.js";
import { OPERATIONS, authorize, routeNeed, toolNeed, type OperationId } from "../../../core/daemon/authorization.js";
import { reachOf, remotePrincipal, type RemoteVia } from "../../../core/daemon/principal.js";
import { REMOTE_MARKER, readRemoteMarker, remoteMarker } from "../../../core/daemon/remote-marker.js";

const KEY = "forward-key-of-this-boot-0123456789";
const FWD = { forwarded: 'for="x"', "x-forwarded-for": "x" };
const req = (headers: Record<string, string>, remoteAddress = "127.0.0.1") => ({ headers, remoteAddress });
const marked = (via: RemoteVia, key = KEY) => ({ ...FWD, [REMOTE_MARKER]: remoteMarker(key, via) });

describe("the remote marker", () => {
  it("names the caller only with this boot's key; any other header value is an ordinary network caller", () => {
    const pairing: RemoteVia = { kind: "pairing", pairingId: "a1b2c3", scope: "operate" };
    expect(readRemoteMarker(marked(pairing), KEY)).toEqual(pairing);
    expect(readRemoteMarker(marked({ kind: "sealed" }), KEY)).toEqual({ kind: "sealed" });
    expect(readRemoteMarker(marked(pairing, "another-key"), KEY)).toBeUndefined();
    expect(readRemoteMarker(marked(pairing), undefined)).toBeUndefined();
    for (const bad of [
      `${KEY} pairing a1 admin`,
      `${KEY} pairing a:1 read`,
      `${KEY} tunnel extra`,
      `${KEY} root`,
      `${KEY}`,
      "",
    ]) {
      expect(readRemoteMarker({ [REMOTE_MARKER]: bad }, KEY), bad).toBeUndefined();
    }
  });

  it("never reads a forged header as a remote caller: any other key, or any other text (fast-check)", () => {
    const via = fc.oneof(
      fc.constant<RemoteVia>({ kind: "tunnel" }),
      fc.constant<RemoteVia>({ kind: "sealed" }),
      fc.record({
        kind: fc.constant("pairing" as const),
        pairingId: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
        scope: fc.constantFrom("read" as const, "operate" as const),
      }),
    );
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((k) => k !== KEY && !/\s/.test(k)),
        via,
        (key, v) => {
          // Well formed but for the key: ignored. With this boot's key, the same marker is read.
          expect(readRemoteMarker({ [REMOTE_MARKER]: remoteMarker(key, v) }, KEY)).toBeUndefined();
          expect(readRemoteMarker({ [REMOTE_MARKER]: remoteMarker(KEY, v) }, KEY)).toEqual(v);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), (h) => {
        expect(readRemoteMarker({ [REMOTE_MARKER]: h }, KEY)).toBeUndefined();
      }),
    );
  });
});

describe("authenticate beyond loopback", () => {
  const open = { boot: "boot-token", forward: KEY };
  const closed = { ...open, stable: "stable-token" };

  it("a pairing is let in by its link, with its scope, whether or not daemon.authToken is set", () => {
    for (const tokens of [open, closed]) {
      expect(
        authenticate("loopback-or-token", req(marked({ kind: "pairing", pairingId: "p1", scope: "read" })), tokens),
      ).toBe("remote:pairing:p1:read");
    }
  });

  it("a tunnel caller and a network caller only while daemon.authToken is unset", () => {
    expect(authenticate("loopback-or-token", req(marked({ kind: "tunnel" })), open)).toBe("remote:tunnel");
    expect(authenticate("loopback-or-token", req(FWD), open)).toBe("anonymous");
    expect(authenticate("loopback-or-token", req({}, "203.0.113.9"), open)).toBe("anonymous");
    expect(() => authenticate("loopback-or-token", req(marked({ kind: "sealed" })), closed)).toThrow(
      /bearer token is required/,
    );
    expect(() => authenticate("loopback-or-token", req(FWD), closed)).toThrow(/bearer token is required/);
  });

  it("a presented token makes anyone the owner; a marker never makes a loopback caller remote", () => {
    expect(
      authenticate(
        "loopback-or-token",
        req({ ...marked({ kind: "tunnel" }), authorization: "Bearer stable-token" }),
        closed,
      ),
    ).toBe("token:stable");
    expect(
      authenticate("loopback-or-token", req({ [REMOTE_MARKER]: remoteMarker(KEY, { kind: "tunnel" }) }), open),
    ).toBe("loopback");
  });
});

describe("authorize for each kind of caller", () => {
  const ids = Object.keys(OPERATIONS) as OperationId[];
  const callers = {
    loopback: "loopback",
    token: "token:boot",
    network: "anonymous",
    tunnel: remotePrincipal({ kind: "tunnel" }),
    sealed: remotePrincipal({ kind: "sealed" }),
    read: remotePrincipal({ kind: "pairing", pairingId: "p", scope: "read" }),
    operate: remotePrincipal({ kind: "pairing", pairingId: "p", scope: "operate" }),
  };
  const allowed = (id: OperationId, p: string) => {
    try {
      authorize(id, p);
      return true;
    } catch {
      return false;
    }
  };

  it("read callers read and nothing more; operate adds the operate operations; the token gets all", () => {
    for (const id of ids) {
      const op = OPERATIONS[id];
      expect(allowed(id, callers.token), id).toBe(true);
      expect(allowed(id, callers.loopback), id).toBe(op.requires === "local");
      for (const who of ["network", "tunnel", "sealed", "read"] as const)
        expect(allowed(id, callers[who]), `${who} ${id}`).toBe(op.requires === "local" && op.remote === "read");
      expect(allowed(id, callers.operate), id).toBe(op.requires === "local" && op.remote !== "owner");
    }
    expect(reachOf(callers.operate)).toBe("operate");
  });

  it("starting a session is operate on every surface; the refusal says how to get it", () => {
    expect(routeNeed("POST", "/sessions")).toEqual({ id: "session.start", need: "operate" });
    expect(toolNeed("start_agent_session", false)).toBe("operate");
    expect(toolNeed("session_list", true)).toBe("read");
    // A route of both kinds (session or outbound target) asks the least at the door, the handler the rest.
    expect(routeNeed("POST", "/sentinels").need).toBe("operate");
    expect(routeNeed("POST", "/pairing/offers").need).toBe("token");
    expect(routeNeed("GET", "/not-in-the-table").need).toBe("read");
    expect(routeNeed("POST", "/not-in-the-table").need).toBe("operate");
    expect(() => authorize("session.start", callers.read)).toThrow(
      /session\.start \(start an agent session from a configured adapter\) needs the operate scope; pairing p \(scope read\) may only read: .*svc pair scope p operate/,
    );
    expect(() => authorize("session.start", callers.tunnel)).toThrow(/plain tunnel requests never operate/);
    expect(() => authorize("config.write", callers.operate)).toThrow(
      /needs the daemon's owner .*may only read and operate/,
    );
  });
});
