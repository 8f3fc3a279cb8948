/**
 * A page's sections, for the tests that hold a page to the code: a section rendered from code (a
 * table of limits, of audit events), and a section under a `## ` heading (a list of the files a new
 * factor touches).
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

/** The section of `page` under `heading` (a `## ` heading, written out): from it to the next `## ` heading, or the page's end. */
export function pageSection(page: string, heading: string): string {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
  const from = text.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const to = text.indexOf("\n## ", from + 1);
  return text.slice(from, to === -1 ? undefined : to);
}
