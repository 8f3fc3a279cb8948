/**
 * The one rule for text a client sends that may reach the database: PostgreSQL `text` cannot
 * hold U+0000 (it refuses the statement with 22021), so such a value is refused at the edge with
 * the route's own 400 answer and never sent to the database.
 */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000");
}
