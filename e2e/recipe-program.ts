/**
 * A recipe page's program (docs/recipes/): every fenced block of the recipe's language whose first
 * line names its file in a comment (`// app/page.js`, `# app.py`), verbatim. A one-file recipe has
 * one such block; an application of several files (a Next.js app) shows each file in its own.
 * And its set-up: the commands of its `## Set up` section (setUpWays, below).
 * e2e/recipes.spec.ts sets each recipe up in an empty folder, writes these files and runs them;
 * tests/docs/recipes.test.ts holds them equal to the recipe's examples/ folder, and the set-up
 * true to what the program imports.
 */

export interface ProgramFile {
  /** Relative to the application's folder. */
  path: string;
  text: string;
}

/** `// <path>` or `# <path>`: forward slashes, a file extension, no absolute path, `.` or `..` step. */
const PATH_COMMENT = /^(?:\/\/|#) ((?:[\w.[\]-]+\/)*[\w.[\]-]+\.\w+)$/;

export function programFiles(page: string, language: string): ProgramFile[] {
  const files: ProgramFile[] = [];
  for (const block of page.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))) {
    const text = block[1]!;
    const path = PATH_COMMENT.exec(text.slice(0, text.indexOf("\n")))?.[1];
    if (!path) continue;
    if (path.split("/").some((step) => step === "." || step === "..")) throw new Error(`a recipe's file must stay in its folder: ${path}`);
    if (files.some((file) => file.path === path)) throw new Error(`the page shows ${path} twice`);
    files.push({ path, text });
  }
  if (files.length === 0) throw new Error(`no \`\`\`${language} block opens with its file's path`);
  return files;
}

/**
 * One way to set a recipe up from an empty folder: a ```sh block of the page's "## Set up" section,
 * its commands in order (comment lines left out). The last one starts the application, once the
 * program's files are in the folder; the others come before them. A page with more than one block
 * shows alternatives, in the order a reader tries them (the module proxy, then Debian's packages).
 */
export interface SetUpWay {
  commands: string[];
  run: string;
}

export function setUpWays(page: string): SetUpWay[] {
  const section = /^## Set up\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(page)?.[1];
  if (section === undefined) throw new Error("the page has no `## Set up` section");
  const ways: SetUpWay[] = [];
  for (const block of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = block[1]!
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    // One command a line: a reader copies them one at a time, and the test runs them so.
    if (lines.some((line) => line.endsWith("\\"))) throw new Error("a set-up command continues on the next line");
    const run = lines.pop();
    if (!run) throw new Error("a ```sh block of `## Set up` has no command");
    ways.push({ commands: lines, run });
  }
  if (ways.length === 0) throw new Error("`## Set up` has no ```sh block");
  return ways;
}
