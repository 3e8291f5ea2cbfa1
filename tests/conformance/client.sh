#!/usr/bin/env bash
# The client under test for the MCP conformance suite: the suite runs this with its test
# server's URL as the last argument and the scenario in MCP_CONFORMANCE_SCENARIO
# (MCP_CONFORMANCE_CONTEXT: JSON of what a scenario gives the client, such as a
# pre-registered client). It configures that URL as a remote server and runs a Code Mode
# program through `dsh-tools run --oauth-headless --elicit defaults` that calls the server's tools, with a
# private token directory so every scenario starts unauthorized.
set -euo pipefail
url="${!#}"
here="$(cd "$(dirname "$0")" && pwd)"
bin="${DSH_TOOLS_BIN:-$here/../../target/debug/dsh-tools}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config"
python3 - "$url" "${MCP_CONFORMANCE_CONTEXT:-}" > "$work/config.json" <<'PY'
import json, sys
url, context = sys.argv[1], sys.argv[2]
server = {"url": url}
context = json.loads(context) if context else {}
# The client ID metadata document URL the suite's authorization server expects (used only
# where a server advertises client_id_metadata_document_supported; else dynamic registration).
oauth = {"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
if context.get("client_id"):
    oauth["clientId"] = context["client_id"]
if context.get("client_secret"):
    oauth["clientSecret"] = context["client_secret"]
server["oauth"] = oauth
print(json.dumps({"mcpServers": {"test": server}}))
PY
cat > "$work/program.ts" <<'TS'
// Every tool of the server, with arguments its name asks for (`add_numbers`: two numbers).
const called = {};
for (const name of Object.keys(tools).filter((n) => n.startsWith("mcp__test__"))) {
  const args = name.endsWith("add_numbers") ? { a: 2, b: 3 } : {};
  called[name] = await tools[name](args);
}
return called;
TS
exec "$bin" run --oauth-headless --elicit defaults --config "$work/config.json" "$work/program.ts"
