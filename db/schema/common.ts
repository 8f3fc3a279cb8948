import { timestamp } from "drizzle-orm/pg-core";

/** All times are timestamptz, written from the injected clock, never from the database's now(). */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
