/**
 * Domain signals: what happened in this process, as the module that decided it says so, for
 * whoever watches. A rule emits its signal where it is decided (a token issued where the token
 * endpoint answers, a refresh token's reuse where its family ends, a refusal in the one limiter of
 * declarations, a 503 in the one failure mapping, a sign-in's factor where the flow records it, a
 * request where its answer is done, a database statement where the client's wrapper times it),
 * and knows nothing of who observes: the domain metrics (lib/metrics) subscribe when METRICS_PORT
 * enables them; a new observer subscribes the same way (`observe`), without touching the rule.
 *
 * The catalogue (`Signals`) is the one list of what may be signalled, each with its typed payload.
 * A payload says what happened in the domain's words; an observer picks what it needs (the metrics
 * read bounded values only: a grant type, a limit's name, an error family, a closed list's value).
 *
 * Emitting is on hot paths (every token, every request, every statement), so it costs nothing
 * measurable: with no observer, `signal` reads one array's length and returns; with observers,
 * each is called directly and synchronously with the payload (no copy, no promise, no queue). An
 * observer that throws is dropped from that one call (its error reported once on stderr) and never
 * reaches the request; an observer that needs to do slow work starts it itself, without awaiting.
 *
 * Observers live on `globalThis`, like the service (lib/service.ts): the copy of this module in
 * Next's bundles (hosted pages, server actions) signals to the observers the custom server's copy
 * subscribed.
 */

/** A sign-in method as the signals name it: each factor's descriptor's label, or a federated source (lib/sign-in/outcomes.ts `SIGN_IN_METHODS`). */
export type SignInMethod = string;

export const SIGN_IN_OUTCOMES = ["success", "failure"] as const;
export type SignInOutcome = (typeof SIGN_IN_OUTCOMES)[number];

/** What a database timing measures: one statement, or one transaction from its BEGIN to its end. */
export type DatabaseTiming = "statement" | "transaction";

/** The catalogue: every signal's name and what its payload says. */
export interface Signals {
  /** The token endpoint answered with tokens (lib/oauth/token.ts): once per token response, by its grant type (`GRANTS`). */
  token_issued: Readonly<{ grantType: string; workspaceId: string; clientId: string }>;
  /**
   * A superseded refresh token was presented again, and its family (the grant) was revoked
   * (lib/oauth/grants/refresh-token.ts), once the revocation committed: once per family. `address`
   * is where the reused token came from (TRUST_PROXY's rule), `userId` null for no user.
   */
  refresh_reuse_detected: Readonly<{ workspaceId: string; clientId: string; grantId: string; userId: string | null; address: string | null }>;
  /** A declared limit refused an attempt or a request (lib/limits/declarations.ts), by the declaration's name. */
  rate_limit_refused: Readonly<{ limit: string }>;
  /** A dependency (the database) could not confirm authority, answered 503 (lib/http/errors.ts), by the route's error family. */
  dependency_failed: Readonly<{ family: string }>;
  /** A sign-in step verified (`success`) or refused (`failure`) a factor (lib/sign-in/outcomes.ts, failures.ts). */
  sign_in_factor: Readonly<{ method: SignInMethod; outcome: SignInOutcome }>;
  /**
   * The production listener's answer to a request is done (lib/server/request-log.ts): its family
   * (lib/server/request-family.ts), method, status (`aborted`: the client went away before it was
   * sent in full) and the seconds from its arrival.
   */
  request_answered: Readonly<{ family: string; method: string; status: number | "aborted"; seconds: number }>;
  /**
   * A database statement, or a transaction from its BEGIN to its COMMIT or ROLLBACK, ended (either
   * way) after `seconds` (db/client.ts, through ./database.ts). Emitted only while it is observed:
   * the client asks first.
   */
  database_timed: Readonly<{ kind: DatabaseTiming; seconds: number }>;
}

export type SignalName = keyof Signals;
export type Observer<N extends SignalName> = (payload: Signals[N]) => void;

type Observers = { [N in SignalName]: readonly Observer<N>[] };

/** Signalling and observing over one set of observers: the process's (below), or a test's own. */
export interface SignalHub {
  /** Signals that `name` happened: each observer is called with `payload`, in the order they subscribed. */
  signal: <N extends SignalName>(name: N, payload: Signals[N]) => void;
  /** Whether anyone observes `name` (a producer whose payload costs something to build asks first). */
  observed: (name: SignalName) => boolean;
  /**
   * Calls `observer` with every `name` signalled from now on, until the returned function is
   * called. Subscribing the same function twice to one signal is one subscription.
   */
  observe: <N extends SignalName>(name: N, observer: Observer<N>) => () => void;
}

/** Every signal of the catalogue. */
export const SIGNAL_NAMES = ["token_issued", "refresh_reuse_detected", "rate_limit_refused", "dependency_failed", "sign_in_factor", "request_answered", "database_timed"] as const satisfies readonly SignalName[];

/**
 * A hub with observers of its own. `report` hears an observer's error, once per observer (its
 * further errors are dropped unheard).
 */
export function signalHub(report: (name: SignalName, error: unknown) => void = reportToStderr): SignalHub {
  // Each list is replaced, never changed in place, so an emit in progress keeps the list it read.
  // The functions use no `this`: the process's are exported as they are (below).
  const observers = Object.fromEntries(SIGNAL_NAMES.map((name) => [name, []])) as unknown as Observers;
  const reported = new WeakSet<object>();
  const lists = observers as Record<SignalName, readonly Observer<never>[]>;
  return {
    signal(name, payload) {
      const list = observers[name] as readonly Observer<typeof name>[];
      if (list.length === 0) return;
      for (let i = 0; i < list.length; i++) {
        try {
          list[i](payload);
        } catch (error) {
          // Never the producer's problem: dropped, and heard once per observer.
          if (reported.has(list[i])) continue;
          reported.add(list[i]);
          report(name, error);
        }
      }
    },
    observed(name) {
      return observers[name].length > 0;
    },
    observe(name, observer) {
      const current = observers[name] as readonly Observer<typeof name>[];
      if (!current.includes(observer)) lists[name] = [...current, observer] as readonly Observer<never>[];
      return () => {
        const now = observers[name] as readonly Observer<typeof name>[];
        if (now.includes(observer)) lists[name] = now.filter((o) => o !== observer) as readonly Observer<never>[];
      };
    },
  };
}

function reportToStderr(name: SignalName, error: unknown): void {
  console.error(`latchkey: an observer of the signal ${name} failed (its further failures are not reported): ${error instanceof Error ? error.message : String(error)}`);
}

const KEY = Symbol.for("latchkey.signals");
const scope = globalThis as Record<symbol, unknown>;
/** The process's hub, shared by every copy of this module (see the top of the file). */
const hub: SignalHub = (scope[KEY] as SignalHub | undefined) ?? (scope[KEY] = signalHub());

/** Signals that `name` happened to the process's observers (`SignalHub.signal`). */
export const signal: SignalHub["signal"] = hub.signal;
/** Whether the process observes `name` (`SignalHub.observed`). */
export const observed: SignalHub["observed"] = hub.observed;
/** Observes `name` in the process from now on (`SignalHub.observe`); returns what stops it. */
export const observe: SignalHub["observe"] = hub.observe;
