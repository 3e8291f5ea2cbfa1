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
      "listChanged": [<list_changed notifications per session>...],
      "requests": [[<method>, <status>, <Last-Event-ID sent or null>]...],
      "swallowed": [<SSE text kept from the client by "cut">...]}
A call step with "cut": true has its POST's SSE stream cut after its first event (the
priming event, which carries an id): the rest, the call's response included, is read to the
end by the transport and kept from the client, which must then reconnect with
Last-Event-ID to get it. "requests" lists every HTTP request the client made (the DELETEs
of the sessions closed on exit included).

Load: `clients` sessions at once, each making `calls` calls of one tool one after another:
  '{"url": ..., "token": ..., "load": {"clients": 50, "calls": 20, "name": ..., "arguments": {...}}}'
  -> {"answered": <successful results>, "failed": [<first few failures>]}
"""

import asyncio
import contextlib

import anyio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
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


CALL_DEADLINE = 60


class Cut(httpx2.AsyncByteStream):
    """Passes its response's first SSE event on, then reads the rest to the end and keeps it."""

    def __init__(self, inner, swallowed):
        self.inner = inner
        self.swallowed = swallowed

    async def __aiter__(self):
        head, rest, passed = b"", b"", False
        async for chunk in self.inner:
            if passed:
                rest += chunk
                continue
            head += chunk
            end = head.find(b"\n\n")
            if end >= 0:
                passed = True
                yield head[: end + 2]
                rest += head[end + 2 :]
        self.swallowed.append(rest.decode())

    async def aclose(self):
        await self.inner.aclose()


class Recording(httpx2.AsyncBaseTransport):
    """Logs every request's method, status and Last-Event-ID; cuts the calls it is told to."""

    def __init__(self):
        self.inner = httpx2.AsyncHTTPTransport()
        self.log = []
        self.swallowed = []
        self.cut_next_call = False

    async def handle_async_request(self, request):
        response = await self.inner.handle_async_request(request)
        self.log.append([request.method, response.status_code, request.headers.get("last-event-id")])
        try:
            body = request.content if request.method == "POST" else b""
        except httpx2.RequestNotRead:
            body = b""
        event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
        if self.cut_next_call and b'"tools/call"' in body and event_stream:
            self.cut_next_call = False
            return httpx2.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=Cut(response.stream, self.swallowed),
                extensions=response.extensions,
                request=request,
            )
        return response

    async def aclose(self):
        await self.inner.aclose()


@contextlib.asynccontextmanager
async def session(spec, stack, changes=None, recording=None):
    if recording is None:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {spec['token']}"})
    else:
        client = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {spec['token']}"},
            timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
            transport=recording,
        )
    await stack.enter_async_context(client)
    read, write = await stack.enter_async_context(streamable_http_client(spec["url"], http_client=client))
    handler = changes.on_message if changes else None
    opened = await stack.enter_async_context(ClientSession(read, write, message_handler=handler))
    init = await opened.initialize()
    yield opened, init


async def step(opened, changes, spec, recording):
    if spec.get("cut"):
        recording.cut_next_call = True
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
        # A server that never answers (a lost response never replayed) fails the step
        # instead of hanging the test.
        with anyio.fail_after(CALL_DEADLINE):
            result = await opened.call_tool(spec["name"], spec.get("arguments", {}), progress_callback=callback)
    except MCPError as error:
        return {"error": {"code": error.code, "message": error.message}}
    except TimeoutError:
        return {"error": {"message": f"no answer within {CALL_DEADLINE} s"}}
    # Callbacks run in tasks of their own: let those already spawned finish.
    for _ in range(100):
        await anyio.sleep(0)
    report = call_report(result)
    if callback:
        report["progress"] = reports
    return report


async def steps(spec):
    recording = Recording()
    async with contextlib.AsyncExitStack() as stack:
        sessions, servers, changes = [], [], []
        for _ in range(spec["sessions"]):
            changes.append(Changes())
            opened, init = await stack.enter_async_context(session(spec, stack, changes[-1], recording))
            sessions.append(opened)
            servers.append(init.server_info.name)
        report = {"servers": servers, "steps": []}
        for each in spec["steps"]:
            index = each["session"]
            report["steps"].append(await step(sessions[index], changes[index], each, recording))
        report["listChanged"] = [each.count for each in changes]
    report["requests"] = recording.log
    report["swallowed"] = recording.swallowed
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
