/**
 * A page's section that is rendered from code (a table of limits, of audit events): the text
 * between its start and end markers, which the page's test compares with the rendering.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";

export function generatedSection(page: string, start: string, end: string): string {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  expect(from).toBeGreaterThan(-1);
  expect(to).toBeGreaterThan(from);
  return text.slice(from + start.length, to).trim();
}
