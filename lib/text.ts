/** A UTF-16 surrogate without its other half (what a JSON `\ud800` escape makes): no Unicode character. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one rule for text a client sends that may reach the database: PostgreSQL `text` cannot
 * hold U+0000 (it refuses the statement with 22021), and neither `text` nor `jsonb` holds half a
 * surrogate pair (a JSON body's `\ud800`: the driver would store U+FFFD in its place, jsonb refuses
 * it), so such a value is refused at the edge with the route's own 400 answer and never sent to
 * the database. Form bodies and query strings never carry the second (their decoding replaces
 * invalid bytes); JSON bodies can.
 */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}
