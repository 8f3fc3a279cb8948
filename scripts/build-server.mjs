#!/usr/bin/env node
// The production server, compiled ahead of time: server.ts and everything it imports from lib/
// and db/ bundled by esbuild into one ES module, .next/latchkey-server.mjs (packages stay in
// node_modules, imported as they are). `npm start` and `npm run bench` run it with plain node, so
// the server neither transpiles TypeScript at run time nor keeps each module's source and source
// map in its heap (what `node --import tsx server.ts` did). Part of `npm run build`, after
// `next build` (which empties .next); `npm run dev` still runs server.ts through tsx.
//
// A source map is written beside it: `NODE_OPTIONS=--enable-source-maps npm start` makes stack
// traces name the TypeScript files (it costs heap, so it is not the default).
import { realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Where the compiled server is written, relative to the checkout. */
export const SERVER_BUNDLE = path.join(".next", "latchkey-server.mjs");

export async function buildServer() {
  await build({
    absWorkingDir: root,
    entryPoints: ["server.ts"],
    outfile: SERVER_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    // Packages are imported from node_modules at run time, as tsx imported them.
    packages: "external",
    sourcemap: "linked",
    logLevel: "warning",
    legalComments: "none",
  });
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  buildServer().then(
    () => console.log(`[build] server compiled to ${SERVER_BUNDLE} in ${Date.now() - started} ms`),
    (error) => {
      console.error(`[build] compiling the server failed: ${error.message}`);
      process.exit(1);
    },
  );
}
