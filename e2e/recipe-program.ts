/**
 * A recipe page's program (docs/recipes/): every fenced block of the recipe's language whose first
 * line names its file in a comment (`// app/page.js`, `# app.py`), verbatim. A one-file recipe has
 * one such block; an application of several files (a Next.js app) shows each file in its own.
 * e2e/recipes.spec.ts writes these files and runs them; tests/docs/recipes.test.ts holds them equal
 * to the recipe's examples/ folder.
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
