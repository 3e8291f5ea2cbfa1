#!/usr/bin/env python3
"""Drives `dsh-tools mcp --http` with the official Python MCP client (PyPI `mcp`) over
Streamable HTTP. Two kinds of spec; each prints one JSON report on stdout.

Steps: several sessions are opened (initialized) and kept open at once, then the steps run
in order, each in the session it names:
  '{"url": ..., "token": ..., "sessions": 2,
    "steps": [{"session": 0, "op": "list"},
              {"session": 1, "op": "call", "name": ..., "arguments": {...}, "progress": true},
              {"session": 0, "op": "waitListChanged"}]}'
  -> {"servers": [<serverInfo.name>...], "steps": [<tool names> | <call result> |
      <list_changed count once one arrived (10 s at most)>...],
      "listChanged": [<list_changed notifications per session>...]}

Load: `clients` sessions at once, each making `calls` calls of one tool one after another:
  '{"url": ..., "token": ..., "load": {"clients": 50, "calls": 20, "name": ..., "arguments": {...}}}'
  -> {"answered": <successful results>, "failed": [<first few failures>]}
"""

import asyncio
import contextlib

import anyio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def call_report(result):
    return {
        "isError": bool(result.is_error),
        "content": [block.model_dump(mode="json", exclude_none=True) for block in result.content],
        "structuredContent": result.structured_content,
    }


class Changes:
    """Counts one session's notifications/tools/list_changed."""

    def __init__(self):
        self.count = 0
        self.arrived = anyio.Event()

    async def on_message(self, message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.count += 1
            self.arrived.set()


@contextlib.asynccontextmanager
async def session(spec, stack, changes=None):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {spec['token']}"})
    await stack.enter_async_context(client)
    read, write = await stack.enter_async_context(streamable_http_client(spec["url"], http_client=client))
    handler = changes.on_message if changes else None
    opened = await stack.enter_async_context(ClientSession(read, write, message_handler=handler))
    init = await opened.initialize()
    yield opened, init


async def step(opened, changes, spec):
    if spec["op"] == "waitListChanged":
        with anyio.move_on_after(10):
            await changes.arrived.wait()
        return changes.count
    if spec["op"] == "list":
        listed = await opened.list_tools()
        return [tool.name for tool in listed.tools]
    reports = []

    async def on_progress(progress, total, message):
        reports.append([progress, total, message])

    callback = on_progress if spec.get("progress") else None
    try:
        result = await opened.call_tool(spec["name"], spec.get("arguments", {}), progress_callback=callback)
    except MCPError as error:
        return {"error": {"code": error.code, "message": error.message}}
    # Callbacks run in tasks of their own: let those already spawned finish.
    for _ in range(100):
        await anyio.sleep(0)
    report = call_report(result)
    if callback:
        report["progress"] = reports
    return report


async def steps(spec):
    async with contextlib.AsyncExitStack() as stack:
        sessions, servers, changes = [], [], []
        for _ in range(spec["sessions"]):
            changes.append(Changes())
            opened, init = await stack.enter_async_context(session(spec, stack, changes[-1]))
            sessions.append(opened)
            servers.append(init.server_info.name)
        report = {"servers": servers, "steps": []}
        for each in spec["steps"]:
            index = each["session"]
            report["steps"].append(await step(sessions[index], changes[index], each))
        report["listChanged"] = [each.count for each in changes]
        return report


async def load(spec):
    plan = spec["load"]
    answered = 0
    failed = []

    async def one_client():
        nonlocal answered
        async with contextlib.AsyncExitStack() as stack:
            opened, _ = await stack.enter_async_context(session(spec, stack))
            for _ in range(plan["calls"]):
                try:
                    result = await opened.call_tool(plan["name"], plan.get("arguments", {}))
                except Exception as error:  # noqa: BLE001 - every failure is reported
                    failed.append(repr(error))
                    continue
                if result.is_error:
                    failed.append(json.dumps(call_report(result)))
                else:
                    answered += 1

    await asyncio.gather(*(one_client() for _ in range(plan["clients"])))
    return {"answered": answered, "failed": failed[:5]}


async def main(spec):
    report = await (load(spec) if "load" in spec else steps(spec))
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
