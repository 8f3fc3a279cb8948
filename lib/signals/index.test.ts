import { describe, expect, it, vi } from "vitest";
import { observe, signal, signalHub, SIGNAL_NAMES, type Signals } from "./index";

/** A payload that fails the test if anything reads it. */
function untouchable<N extends keyof Signals>(): Signals[N] {
  return new Proxy({} as Signals[N], {
    get: (_, key) => {
      throw new Error(`payload read: ${String(key)}`);
    },
  });
}

describe("domain signals", () => {
  it("with no observer, call nobody and read nothing of the payload", () => {
    const hub = signalHub();
    for (const name of SIGNAL_NAMES) {
      expect(hub.observed(name)).toBe(false);
      expect(() => hub.signal(name, untouchable())).not.toThrow();
    }
    const observer = vi.fn();
    const stop = hub.observe("token_issued", observer);
    stop();
    expect(hub.observed("token_issued")).toBe(false);
    hub.signal("token_issued", untouchable<"token_issued">());
    expect(observer).not.toHaveBeenCalled();
  });

  it("call each observer of the signal, synchronously, with the payload itself; none of another signal", () => {
    const hub = signalHub();
    const calls: string[] = [];
    const issued = vi.fn((payload: Signals["token_issued"]) => calls.push(`first ${payload.grantType}`));
    hub.observe("token_issued", issued);
    hub.observe("token_issued", (payload) => calls.push(`second ${payload.clientId}`));
    const refused = vi.fn();
    hub.observe("rate_limit_refused", refused);
    const payload = { grantType: "refresh_token", workspaceId: "w1", clientId: "c1" };
    hub.signal("token_issued", payload);
    // Before signal returns: no promise, no queue.
    expect(calls).toEqual(["first refresh_token", "second c1"]);
    expect(issued.mock.calls[0][0]).toBe(payload);
    expect(refused).not.toHaveBeenCalled();
    expect(hub.observed("token_issued")).toBe(true);
    expect(hub.observed("dependency_failed")).toBe(false);
  });

  it("subscribe a function once however often it is observed, until it stops", () => {
    const hub = signalHub();
    const observer = vi.fn();
    const stop = hub.observe("dependency_failed", observer);
    hub.observe("dependency_failed", observer);
    hub.signal("dependency_failed", { family: "oauth" });
    expect(observer).toHaveBeenCalledTimes(1);
    stop();
    hub.signal("dependency_failed", { family: "oauth" });
    expect(observer).toHaveBeenCalledTimes(1);
  });

  it("never let an observer's error reach the producer: dropped, the others still called, reported once per observer", () => {
    const report = vi.fn();
    const hub = signalHub(report);
    const after = vi.fn();
    hub.observe("refresh_reuse_detected", () => {
      throw new Error("observer broke");
    });
    hub.observe("refresh_reuse_detected", after);
    const reuse = { workspaceId: "w1", clientId: "c1", grantId: "g1", userId: null, address: null };
    expect(() => hub.signal("refresh_reuse_detected", reuse)).not.toThrow();
    expect(() => hub.signal("refresh_reuse_detected", reuse)).not.toThrow();
    expect(after).toHaveBeenCalledTimes(2);
    expect(report).toHaveBeenCalledTimes(1);
    expect(report).toHaveBeenCalledWith("refresh_reuse_detected", expect.objectContaining({ message: "observer broke" }));
  });

  it("keep the list an emit started with when an observer subscribes or stops during it", () => {
    const hub = signalHub();
    const later = vi.fn();
    let stopSecond = () => {};
    hub.observe("sign_in_factor", () => {
      hub.observe("sign_in_factor", later);
      stopSecond();
    });
    const second = vi.fn();
    stopSecond = hub.observe("sign_in_factor", second);
    hub.signal("sign_in_factor", { method: "password", outcome: "success" });
    expect(second).toHaveBeenCalledTimes(1);
    expect(later).not.toHaveBeenCalled();
    hub.signal("sign_in_factor", { method: "password", outcome: "success" });
    expect(second).toHaveBeenCalledTimes(1);
    expect(later).toHaveBeenCalledTimes(1);
  });

  it("keep the process's observers on globalThis, where Next's copy of this module finds the server's", () => {
    const seen = vi.fn();
    const stop = observe("request_answered", seen);
    try {
      // What a second copy of this module reads at load (the same key, the same hub).
      const shared = (globalThis as Record<symbol, { signal: typeof signal } | undefined>)[Symbol.for("latchkey.signals")];
      expect(shared?.signal).toBe(signal);
      shared!.signal("request_answered", { family: "token", method: "POST", status: 200, seconds: 0.001 });
      expect(seen).toHaveBeenCalledWith({ family: "token", method: "POST", status: 200, seconds: 0.001 });
    } finally {
      stop();
    }
  });
});
