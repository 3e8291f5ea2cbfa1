#!/usr/bin/env python3
"""An MCP server (stdio, newline-delimited JSON-RPC, stdlib only) whose one tool, `forecast`,
declares no outputSchema yet returns structuredContent beside its text, as MCP allows and
many servers do: the host must keep that object through ingestion and re-serving.
"""

import json
import sys

FORECAST = {
    "name": "forecast",
    "description": "Tomorrow's weather, as text and as an object.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(message, result):
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            answer(message, {
                "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "structured", "version": "1"},
            })
        elif method == "tools/list":
            answer(message, {"tools": [FORECAST]})
        elif method == "tools/call":
            city = (message["params"].get("arguments") or {}).get("city", "Oslo")
            answer(message, {
                "content": [{"type": "text", "text": f"{city}: light rain, 7.5 °C"}],
                "structuredContent": {"city": city, "sky": "light rain", "celsius": 7.5},
            })
        elif method == "ping":
            answer(message, {})
        elif "id" in message and method is not None:
            send({"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": -32601, "message": f"no method {method}"}})


main()
