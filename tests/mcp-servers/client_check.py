#!/usr/bin/env python3
"""Drives an MCP server with the official Python MCP client (PyPI `mcp`), which this project
did not write: initialize, tools/list, then each requested tools/call, then (when asked)
resources/list and resources/read of each requested resource, then (when asked with
"relist") waits for notifications/tools/list_changed and lists the tools again. Prints one
JSON object: the server's name, every listed tool, every call's result (or protocol error),
the listed resources' URIs and the text of each read one, and with "relist" how many
list_changed notifications arrived and the tools listed after them. A call with
"progress": true passes a progress_callback (so its request carries a progressToken) and
reports every callback as [progress, total, message]; "progressNotifications" counts every
notifications/progress the session saw. With "elicit": {"action": ..., "content": ...} the
client declares elicitation (form and URL) and answers every elicitation/create with it;
"elicitations" then lists each request's params. With "follow": true a URL elicitation's URL
is first fetched like a browser would (redirects followed), and "followed" lists each final
status. With "awaitTool": NAME the calls wait until a listing (after list_changed) has NAME.
"env" adds variables to the server's environment.

Usage: client_check.py '{"command": ..., "args": [...], "calls": [{"name": ..., "arguments": {...}, "progress": true}],
                         "resources": ["<uri>", ...], "relist": true, "elicit": {"action": "accept", ...},
                         "follow": true, "awaitTool": "<name>", "env": {"NAME": "value"}}'
"""

import asyncio
import json
import urllib.request

import anyio
import sys

import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError


def tool_report(tool):
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
    }


async def main(spec):
    server = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec.get("env"))
    list_changed = anyio.Event()
    next_change = [anyio.Event()]
    changes = []
    progressed = []

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changes.append(message.method)
            list_changed.set()
            next_change[0].set()
        if getattr(message, "method", None) == "notifications/progress":
            progressed.append(message.method)

    elicitations = []
    followed = []

    def browse(url):
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status

    async def on_elicit(context, params):
        elicitations.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        if spec.get("follow") and getattr(params, "mode", None) == "url":
            followed.append(await anyio.to_thread.run_sync(browse, params.url))
        return types.ElicitResult(**spec["elicit"])

    answering = {"elicitation_callback": on_elicit} if "elicit" in spec else {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message, **answering) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            while "awaitTool" in spec and spec["awaitTool"] not in [t.name for t in listed.tools]:
                with anyio.fail_after(120):
                    await next_change[0].wait()
                next_change[0] = anyio.Event()
                listed = await session.list_tools()
            report = {
                "server": init.server_info.name,
                "listChanged": bool(init.capabilities.tools and init.capabilities.tools.list_changed),
                "tools": [tool_report(tool) for tool in listed.tools],
                "calls": [],
            }
            for call in spec["calls"]:
                reports = []

                async def on_progress(progress, total, message):
                    reports.append([progress, total, message])

                callback = on_progress if call.get("progress") else None
                try:
                    result = await session.call_tool(
                        call["name"], call.get("arguments", {}), progress_callback=callback
                    )
                except MCPError as error:
                    report["calls"].append({"error": {"code": error.code, "message": error.message}})
                    continue
                # Callbacks run in tasks of their own: let those already spawned finish.
                for _ in range(100):
                    await anyio.sleep(0)
                entry = {
                    "isError": bool(result.is_error),
                    "content": [block.model_dump(mode="json", exclude_none=True) for block in result.content],
                    "structuredContent": result.structured_content,
                }
                if callback:
                    entry["progress"] = reports
                report["calls"].append(entry)
            if "resources" in spec:
                listed = await session.list_resources()
                report["resourceList"] = [str(resource.uri) for resource in listed.resources]
                report["resources"] = {}
                for uri in spec["resources"]:
                    read = await session.read_resource(uri)
                    report["resources"][uri] = [content.text for content in read.contents]
            if spec.get("relist"):
                with anyio.move_on_after(10):
                    await list_changed.wait()
                report["listChangedNotifications"] = len(changes)
                relisted = await session.list_tools()
                report["toolsAfter"] = [tool_report(tool) for tool in relisted.tools]
    for _ in range(100):
        await anyio.sleep(0)
    report["progressNotifications"] = len(progressed)
    if "elicit" in spec:
        report["elicitations"] = elicitations
    if spec.get("follow"):
        report["followed"] = followed
    print(json.dumps(report))


asyncio.run(main(json.loads(sys.argv[1])))
