#!/usr/bin/env python3
"""Opens one session per offered MCP protocol revision with the official Python MCP client
(PyPI `mcp`) against a server over stdio ("command", "args") or Streamable HTTP ("url",
"token"), lists the tools in it, and prints one JSON report.

An offer is a revision sent in `initialize` (the client then speaks what the server
answered), or "discover": `server/discover`, the handshake-free lifecycle of `2026-07-28`.

  '{"url": ..., "token": ..., "offers": ["2025-06-18", "discover"]}'
  -> {"sessions": [{"offered": ..., "negotiated": <revision the session speaks>,
                    "supported": <server/discover's supportedVersions, for "discover">,
                    "tools": [<names>]} | {"offered": ..., "error": <message>}...]}
"""

import asyncio
import contextlib
import json
import sys

import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@contextlib.asynccontextmanager
async def connected(spec):
    async with contextlib.AsyncExitStack() as stack:
        if "url" in spec:
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {spec['token']}"})
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(streamable_http_client(spec["url"], http_client=client))
        else:
            server = StdioServerParameters(command=spec["command"], args=spec["args"])
            read, write = await stack.enter_async_context(stdio_client(server))
        yield await stack.enter_async_context(ClientSession(read, write))


async def open_at(opened, offer):
    """Starts the session offering `offer`; returns what the report says about the start."""
    if offer == "discover":
        result = await opened.discover()
        return {"negotiated": opened._negotiated_version, "supported": result.supported_versions}
    params = types.InitializeRequestParams(
        protocol_version=offer,
        capabilities=types.ClientCapabilities(),
        client_info=types.Implementation(name="version-check", version="1"),
    )
    result = await opened.send_request(types.InitializeRequest(params=params), types.InitializeResult)
    opened.adopt(result)
    await opened.send_notification(types.InitializedNotification())
    return {"negotiated": result.protocol_version}


async def one(spec, offer):
    report = {"offered": offer}
    try:
        async with connected(spec) as opened:
            report.update(await open_at(opened, offer))
            listed = await opened.list_tools()
            report["tools"] = sorted(tool.name for tool in listed.tools)
    except Exception as error:  # noqa: BLE001 - every failure is reported
        report["error"] = repr(error)
    return report


async def main(spec):
    sessions = [await one(spec, offer) for offer in spec["offers"]]
    print(json.dumps({"sessions": sessions}))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
