#!/usr/bin/env python3
"""A deliberately awkward MCP server (stdio, newline-delimited JSON-RPC, stdlib only).

The real servers from npm and PyPI cover the ordinary paths; this one produces what they
never do on demand: tool names peers have broken on, schemas from the wild, paginated
listings, malformed listings, protocol errors, observable cancellation, list changes on
request, crashes, and refusing or hanging at startup.

Flags: --hang (never answer initialize), --refuse (exit 2 at once),
       --once FILE (run once; refuse every later start while FILE exists),
       --stubborn (ignore SIGTERM and keep running after stdin closes),
       --grandchild (start a long `sleep` child in the same process group).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

ARGS = sys.argv[1:]
if "--refuse" in ARGS:
    sys.stderr.write("fixture: refusing to start\n")
    sys.exit(2)
if "--once" in ARGS:
    marker = ARGS[ARGS.index("--once") + 1]
    if os.path.exists(marker):
        sys.stderr.write("fixture: refusing to start again\n")
        sys.exit(2)
    open(marker, "w").close()

if "--stubborn" in ARGS:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--grandchild" in ARGS:
    subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL)

PAGE_SIZE = 4
OBJECT = {"type": "object"}
EXOTIC_NAMES = [
    "a.b",
    "with space",
    "dash-ed",
    "café",
    "工具",
    "emoji🎉",
    "__proto__",
    "constructor",
    "toString",
    "then",
    'quote"back\\slash',
    "slash/colon:x",
    "0digit",
    "Echo",
    "echo",
]
RECURSIVE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/Node"}},
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        }
    },
}


def exotic(name):
    return {"name": name, "description": f"Echo tool named {name}", "inputSchema": OBJECT}


TOOLS = [exotic(name) for name in EXOTIC_NAMES] + [
    {"name": "ref_defs", "inputSchema": RECURSIVE},
    {
        "name": "any_of",
        "inputSchema": {
            "type": "object",
            "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
        },
        "outputSchema": {
            "type": "object",
            "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
        },
    },
    {
        "name": "all_of",
        "inputSchema": {"allOf": [OBJECT, {"properties": {"x": {"type": "string"}}}]},
    },
    {"name": "no_properties", "inputSchema": {"type": "object"}},
    {"name": "empty_schema", "inputSchema": {}},
    {"name": "no_input_schema"},
    {"name": "bool_schema", "inputSchema": True},
    {"name": 5, "inputSchema": OBJECT},
    {"name": "echo", "description": "listed twice", "inputSchema": OBJECT},
    {
        "name": "structured",
        "description": "Structured output with exact numbers.",
        "inputSchema": OBJECT,
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "number"}, "count": {"type": "integer"}},
            "required": ["n", "count"],
        },
    },
    {"name": "fail", "inputSchema": OBJECT},
    {"name": "protocol_error", "inputSchema": OBJECT},
    {"name": "sleep", "inputSchema": OBJECT},
    {"name": "sleeping", "inputSchema": OBJECT},
    {"name": "cancellations", "inputSchema": OBJECT},
    {"name": "add_tool", "inputSchema": OBJECT},
    {"name": "remove_tool", "inputSchema": OBJECT},
    {"name": "crash", "inputSchema": OBJECT},
    {"name": "fetch", "description": "GET a URL (through the environment's proxy, if any).", "inputSchema": OBJECT},
]

write_lock = threading.Lock()
cancelled = []
sleeping = []
cancelled_changed = threading.Condition()


def send(message):
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def call(request_id, name, arguments):
    if name == "any_of":
        return {"content": [{"type": "text", "text": "v"}], "structuredContent": {"v": arguments.get("v")}}
    if name in EXOTIC_NAMES or name in ("ref_defs", "all_of", "no_properties",
                                        "empty_schema", "no_input_schema", "bool_schema"):
        return text(f"called {name} with {json.dumps(arguments, sort_keys=True)}")
    if name == "structured":
        raw = '{"content":[{"type":"text","text":"n is 1.50"}],"structuredContent":{"n":1.50,"count":12345}}'
        return json.loads(raw, parse_float=lambda s: RawNumber(s), parse_int=lambda s: RawNumber(s))
    if name == "fail":
        return {"content": [{"type": "text", "text": "the fixture failed on purpose"}], "isError": True}
    if name == "protocol_error":
        raise ProtocolError(-32042, "the fixture rejects this call")
    if name == "sleep":
        with cancelled_changed:
            sleeping.append(request_id)
            cancelled_changed.notify_all()
        time.sleep(3600)
        return text("woke up")
    if name == "sleeping":
        with cancelled_changed:
            cancelled_changed.wait_for(lambda: len(sleeping) >= arguments.get("count", 1), timeout=30)
            return text(json.dumps(sleeping))
    if name == "cancellations":
        with cancelled_changed:
            cancelled_changed.wait_for(lambda: len(cancelled) >= arguments.get("count", 1), timeout=30)
            return text(json.dumps(cancelled))
    if name == "add_tool":
        TOOLS.append({"name": arguments["name"], "inputSchema": OBJECT})
        threading.Timer(0.05, lambda: send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})).start()
        return text("added")
    if name == "remove_tool":
        TOOLS[:] = [t for t in TOOLS if t.get("name") != arguments["name"]]
        threading.Timer(0.05, lambda: send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})).start()
        return text("removed")
    if name == "fetch":
        import urllib.error
        import urllib.request
        try:
            with urllib.request.urlopen(arguments["url"], timeout=20) as response:
                return text(response.read().decode())
        except urllib.error.HTTPError as error:
            return text(f"HTTP {error.code}: {error.read().decode()}")
        except Exception as error:  # noqa: BLE001 - the test reads the failure
            return text(f"failed: {error}")
    if name == "crash":
        sys.stderr.write("fixture: crashing on request\n")
        sys.stderr.flush()
        os._exit(3)
    if any(t.get("name") == name for t in TOOLS):
        return text(f"called {name}")
    raise ProtocolError(-32602, f"Unknown tool: {name}")


class RawNumber(float):
    """A JSON number re-emitted with its exact source text."""

    def __new__(cls, source):
        number = super().__new__(cls, float(source))
        number.source = source
        return number

    def __repr__(self):
        return self.source


class ProtocolError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def encode(value):
    """json.dumps that keeps RawNumber text (1.50 stays 1.50)."""
    if isinstance(value, RawNumber):
        return value.source
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


def answer_call(message):
    request_id = message["id"]
    params = message.get("params") or {}
    try:
        result = call(request_id, params.get("name"), params.get("arguments") or {})
        with write_lock:
            sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(request_id) + ',"result":' + encode(result) + "}\n")
            sys.stdout.flush()
    except ProtocolError as error:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": error.code, "message": error.message}})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            if "--hang" in ARGS:
                continue
            version = message["params"].get("protocolVersion", "2025-06-18")
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fixture", "version": "1"},
            }})
        elif method == "tools/list":
            cursor = int((message.get("params") or {}).get("cursor") or 0)
            page = {"tools": TOOLS[cursor:cursor + PAGE_SIZE]}
            if cursor + PAGE_SIZE < len(TOOLS):
                page["nextCursor"] = str(cursor + PAGE_SIZE)
            send({"jsonrpc": "2.0", "id": message["id"], "result": page})
        elif method == "tools/call":
            threading.Thread(target=answer_call, args=(message,), daemon=True).start()
        elif method == "notifications/cancelled":
            with cancelled_changed:
                cancelled.append(message["params"].get("requestId"))
                cancelled_changed.notify_all()
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif "id" in message and method is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {method}"}})


main()
if "--stubborn" in ARGS:
    while True:
        time.sleep(3600)
