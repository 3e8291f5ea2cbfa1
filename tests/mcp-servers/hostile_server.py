#!/usr/bin/env python3
"""An MCP server (stdio, newline-delimited JSON-RPC, stdlib only) that breaks its transport
on request, for the tests of what the host does about it.

Tools: `huge` answers with a text of `bytes` bytes in one line, its `id` written last
(as the TypeScript SDK does) unless `idFirst`, or left out with `noId`; `huge_notification` first sends a log
notification of `bytes` bytes, then answers "after"; `echo` answers its `message`; `close_stdout` closes stdout and keeps running (never answering);
`offered` answers the protocol version the client offered in `initialize`.

Flags: --stubborn (ignore SIGTERM and keep running after stdin closes); --protocol VERSION
(answer `initialize` with VERSION whatever the client offered; by default the offer is
echoed).
"""

import json
import os
import signal
import sys
import threading
import time

ARGS = sys.argv[1:]
if "--stubborn" in ARGS:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

ANSWERED = ARGS[ARGS.index("--protocol") + 1] if "--protocol" in ARGS else None
OFFERED = []

OBJECT = {"type": "object"}
TOOLS = [
    {"name": name, "inputSchema": OBJECT}
    for name in ["huge", "huge_notification", "echo", "close_stdout", "offered"]
]
write_lock = threading.Lock()


def write(line):
    with write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def send(message):
    write(json.dumps(message))


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def answer_call(message):
    request_id = message["id"]
    params = message.get("params") or {}
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "huge":
        body = json.dumps(text("x" * int(arguments["bytes"])))
        if arguments.get("noId"):
            write('{"jsonrpc":"2.0","result":' + body + "}")
        elif arguments.get("idFirst"):
            write('{"jsonrpc":"2.0","id":' + json.dumps(request_id) + ',"result":' + body + "}")
        else:
            write('{"result":' + body + ',"jsonrpc":"2.0","id":' + json.dumps(request_id) + "}")
        return
    if name == "huge_notification":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": "n" * int(arguments["bytes"])}})
        send({"jsonrpc": "2.0", "id": request_id, "result": text("after")})
        return
    if name == "echo":
        send({"jsonrpc": "2.0", "id": request_id, "result": text(str(arguments.get("message")))})
        return
    if name == "offered":
        send({"jsonrpc": "2.0", "id": request_id, "result": text(" ".join(OFFERED))})
        return
    if name == "close_stdout":
        with write_lock:
            sys.stdout.flush()
            os.close(1)
        sys.stderr.write("hostile: closed stdout\n")
        sys.stderr.flush()
        return
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        try:
            if method == "initialize":
                offered = message["params"].get("protocolVersion", "2025-06-18")
                OFFERED.append(offered)
                send({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": ANSWERED or offered,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                }})
            elif method == "tools/list":
                send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": TOOLS}})
            elif method == "tools/call":
                threading.Thread(target=answer_call, args=(message,), daemon=True).start()
            elif method == "ping":
                send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            elif "id" in message and method is not None:
                send({"jsonrpc": "2.0", "id": message["id"],
                      "error": {"code": -32601, "message": f"no method {method}"}})
        except OSError:
            pass  # stdout closed on request: keep reading, answer nothing


main()
if "--stubborn" in ARGS:
    while True:
        time.sleep(3600)
