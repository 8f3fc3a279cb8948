/**
 * One PostgreSQL connection that LISTENs on a channel and hands each NOTIFY to a callback: how a
 * process hears of changes other processes commit (lib/service.ts, "Several instances" in
 * docs/operations.md). A connection of its own, outside the pool, held open for the process's
 * life: a pooled connection would be returned between queries, and LISTEN belongs to the session.
 *
 * postgres.js has `sql.listen`, but it does not say when its connection is lost, and messages
 * sent until it is back are lost without a word: the caller must know, to stop trusting what it
 * cached. This one says when it listens and when it lost the connection, and after a failed
 * attempt (refused, or answered with an error such as "the database system is starting up") waits
 * before the next, doubling from RETRY_MIN_MS to RETRY_MAX_MS. (A server that accepts connections
 * and closes them at once is tried again without pause by postgres.js itself, as for every pool.)
 */
import postgres from "postgres";

export const RETRY_MIN_MS = 100;
export const RETRY_MAX_MS = 5_000;

export interface ListenerEvents {
  /** A message on the channel (NOTIFY's payload). */
  message(payload: string): void;
  /** LISTEN took effect: from now on every message committed is delivered (after a loss: messages of the gap are lost). */
  listening(): void;
  /** The connection failed or was lost: messages are not delivered until `listening` again. */
  lost(error: unknown): void;
}

export interface Listener {
  /** Listening now (LISTEN answered, and the connection not lost since). */
  readonly active: boolean;
  close(): Promise<void>;
}

export interface ListenerOptions {
  /** How often a listening connection is asked to answer (default CHECK_EVERY_MS). */
  checkEveryMs?: number;
  /** An answer later than this means the connection is gone (default ANSWER_WITHIN_MS). */
  answerWithinMs?: number;
}

/**
 * A listening connection only receives: one whose peer vanished without a reset (a route that
 * drops packets, a proxy that stopped forwarding) would say nothing for ever, and caches would be
 * trusted while the changes of other processes are lost. So it is asked a `select 1` every
 * CHECK_EVERY_MS; no answer within ANSWER_WITHIN_MS is a lost connection, replaced by a new one.
 */
export const CHECK_EVERY_MS = 10_000;
export const ANSWER_WITHIN_MS = 5_000;

/** Listens on `channel` of the database at `databaseUrl` until closed, reconnecting with a growing pause. */
export function listen(databaseUrl: string, channel: string, events: ListenerEvents, options: ListenerOptions = {}): Listener {
  const checkEveryMs = options.checkEveryMs ?? CHECK_EVERY_MS;
  const answerWithinMs = options.answerWithinMs ?? ANSWER_WITHIN_MS;
  let active = false;
  /** `lost` was reported and `listening` not since: a failed retry is not reported again. */
  let down = false;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let connecting = false;

  const lose = (error: unknown) => {
    active = false;
    if (down) return;
    down = true;
    events.lost(error);
  };

  const open = (): postgres.Sql => {
    const client: postgres.Sql = postgres(databaseUrl, {
      max: 1,
      // Held for the process's life: never closed for idleness or age (0 and null: no timer;
      // postgres.js closes pooled connections after 30–60 minutes by default, and messages of the
      // reconnection would be lost).
      idle_timeout: 0,
      max_lifetime: null,
      connect_timeout: 5,
      fetch_types: false,
      onnotice: () => {},
      onnotify: (name: string, payload: string) => {
        if (name === channel && active && client === sql) events.message(payload);
      },
      onclose: () => {
        if (closed || client !== sql) return;
        if (active) lose(new Error("the LISTEN connection closed"));
        schedule();
      },
    } as postgres.Options<Record<string, never>>);
    return client;
  };
  let sql = open();

  const check = setInterval(() => {
    if (!active || closed) return;
    const asked = sql;
    let answered = false;
    const late = setTimeout(() => {
      if (answered || closed || asked !== sql) return;
      // Gone without a word: a new client, and the old one's connection dropped.
      sql = open();
      void asked.end({ timeout: 0 }).catch(() => {});
      lose(new Error(`the LISTEN connection did not answer within ${answerWithinMs} ms`));
      schedule();
    }, answerWithinMs);
    late.unref();
    asked.unsafe("select 1").then(
      () => {
        answered = true;
        clearTimeout(late);
      },
      () => {
        // A failed connection closes, and onclose reports it.
        answered = true;
        clearTimeout(late);
      },
    );
  }, checkEveryMs);
  check.unref();

  function schedule(): void {
    if (closed || active || connecting || timer) return;
    const delay = attempt === 0 ? 0 : Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (attempt - 1));
    attempt++;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
  }

  async function connect(): Promise<void> {
    if (closed || active || connecting) return;
    connecting = true;
    try {
      await sql.unsafe(`listen "${channel.replace(/"/g, '""')}"`);
      connecting = false;
      if (closed) return;
      attempt = 0;
      active = true;
      down = false;
      events.listening();
    } catch (error) {
      connecting = false;
      if (closed) return;
      lose(error);
      schedule();
    }
  }

  schedule();
  return {
    get active() {
      return active;
    },
    async close() {
      closed = true;
      active = false;
      if (timer) clearTimeout(timer);
      clearInterval(check);
      await sql.end({ timeout: 1 });
    },
  };
}
