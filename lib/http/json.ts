/**
 * JSON request bodies of the machine-facing endpoints that take JSON (the permission check, the
 * account-security handoff): one rule for duplicate member names, written once.
 */

/**
 * The member names of the top-level object exactly as written, duplicates included: JSON.parse
 * silently keeps the last of two equal names. `text` must already be valid JSON.
 */
export function topLevelMemberNames(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1) {
        let k = j + 1;
        while (k < text.length && " \t\n\r".includes(text[k])) k++;
        if (text[k] === ":") names.push(JSON.parse(text.slice(i, j + 1)) as string);
      }
      i = j;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return names;
}

/** Whether `text`'s top-level object has exactly `members`, each once (order free). `text` must be valid JSON. */
export function hasExactlyMembers(text: string, members: readonly string[]): boolean {
  const names = topLevelMemberNames(text).sort();
  const expected = [...members].sort();
  return names.length === expected.length && names.every((name, i) => name === expected[i]);
}
