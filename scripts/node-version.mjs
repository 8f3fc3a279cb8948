// The Node.js that `npm start` needs (package.json "engines": >=22.12), checked before anything
// else loads: on an older one (Debian's and Ubuntu's system Node is 20) the start says, in one
// line, what to run first, instead of failing somewhere in the build.

export const MINIMUM_NODE = [22, 12];

/** The one line to print when `version` (e.g. process.versions.node) is too old, or null. */
export function nodeVersionProblem(version) {
  const [major, minor] = version.split(".").map(Number);
  if (major > MINIMUM_NODE[0] || (major === MINIMUM_NODE[0] && minor >= MINIMUM_NODE[1])) return null;
  return `Latchkey needs Node.js ${MINIMUM_NODE.join(".")} or newer and this is v${version}: run \`. scripts/use-node.sh\` first (it installs Node.js 24 for this shell), then \`npm start\` again.`;
}
