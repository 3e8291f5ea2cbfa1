#!/usr/bin/env python3
"""An MCP server (official Python SDK, PyPI `mcp`) whose tools ask the user through
`elicitation/create` and return what came back as JSON text: {"action": ..., "content": ...}.

  book     a form: `guest` (required, no default), `nights` (default 2), `breakfast` (default true)
  confirm  a form whose every field has a default: `nights` (default 2), `room` (default "double")
  open     URL mode: asks the user to open https://example.com/authorize
  capability  the `elicitation` capability the client declared in `initialize` (JSON, null if none)
"""

import json

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("elicit-check")


class Booking(BaseModel):
    guest: str = Field(description="Name on the booking")
    nights: int = Field(default=2, description="How many nights")
    breakfast: bool = Field(default=True, description="Breakfast included")


class Confirmation(BaseModel):
    nights: int = Field(default=2, description="How many nights")
    room: str = Field(default="double", description="Room type")


def answered(result):
    data = getattr(result, "data", None)
    content = data.model_dump() if data is not None else None
    return json.dumps({"action": result.action, "content": content})


@server.tool()
async def book(ctx: Context) -> str:
    """Books a room, asking the user for the details."""
    return answered(await ctx.elicit("Who is the booking for?", Booking))


@server.tool()
async def confirm(ctx: Context) -> str:
    """Confirms a booking whose details all have defaults."""
    return answered(await ctx.elicit("Confirm the booking", Confirmation))


@server.tool()
async def open(ctx: Context) -> str:
    """Sends the user to a page to authorize."""
    result = await ctx.elicit_url("Authorize the calendar", "https://example.com/authorize", "auth-1")
    return json.dumps({"action": result.action, "content": None})


@server.tool()
async def capability(ctx: Context) -> str:
    """The elicitation capability the client declared."""
    declared = ctx.session.client_capabilities
    elicitation = declared.elicitation if declared else None
    return json.dumps(elicitation.model_dump(mode="json", exclude_none=True) if elicitation else None)


if __name__ == "__main__":
    server.run("stdio")
