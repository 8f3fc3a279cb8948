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

/** Listens on `channel` of the database at `databaseUrl` until closed, reconnecting with a growing pause. */
export function listen(databaseUrl: string, channel: string, events: ListenerEvents): Listener {
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

  const sql = postgres(databaseUrl, {
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
      if (name === channel && active) events.message(payload);
    },
    onclose: () => {
      if (closed) return;
      if (active) lose(new Error("the LISTEN connection closed"));
      schedule();
    },
  } as postgres.Options<Record<string, never>>);

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
      await sql.end({ timeout: 1 });
    },
  };
}
