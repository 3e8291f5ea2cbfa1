## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async Python function (top-level `await` and `return` work; type hints are advisory) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — subscript access for names that are not Python identifiers: `await tools["my-tool"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON (`dict` with `str` keys, `list`, `str`, `int`, finite `float`, `bool`, `None`).
- A FAILED tool call raises `ToolCallError`, whose `tool_name` identifies the failed tool and whose `message` is human-readable — `try`/`except ToolCallError` to handle it and continue.
- Independent read-only calls MAY overlap under `asyncio.gather(...)` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `print(...)`. ONLY what you print or return comes back to you — intermediate tool results never enter the conversation, so extract just what you need.

The available tools:

```py
from typing import Any, Awaitable, Callable, Literal, Never, NotRequired, TypedDict, overload

JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]

class ToolCallError(Exception):
    tool_name: str
    message: str

class CollectionsArgsPointsItem(TypedDict):
    x: float
    y: float

class CollectionsArgsConfigRetry(TypedDict):
    times: NotRequired[int]

class CollectionsArgsConfig(TypedDict):
    host: str
    retry: NotRequired[CollectionsArgsConfigRetry]

class CollectionsArgs(TypedDict):
    tags: list[str]
    matrix: NotRequired[list[list[float]]]
    any_list: NotRequired[list[JsonValue]]
    points: NotRequired[list[CollectionsArgsPointsItem]]
    # Nested settings.
    config: NotRequired[CollectionsArgsConfig]
    bag: NotRequired[dict[str, JsonValue]]
    sealed: NotRequired[dict[str, Never]]

class CollectionsOutputItemsItemOption2(TypedDict):
    id: int

class CollectionsOutput(TypedDict):
    items: list[str | CollectionsOutputItemsItemOption2]

class DegradedArgs(TypedDict):
    either: Any
    tuple: NotRequired[Any]
    ref: NotRequired[Any]

class DegradedOutput(TypedDict):
    map: NotRequired[Any]
    unions: NotRequired[int | None]

class LiteralsArgs(TypedDict):
    mode: Literal["fast", "deep"]
    level: NotRequired[Literal[1, 2, 3]]
    fixed: NotRequired[Literal["v1"]]
    on: NotRequired[Literal[True]]

LiteralsOutput = Literal["ok"] | Literal[0] | float | Literal[False] | None

MyToolArgs = dict[str, Any]

class MyToolOutput(TypedDict):
    ok: bool

class ScalarsArgs(TypedDict):
    # Some text
    text: str
    count: int
    ratio: NotRequired[float]
    flag: NotRequired[bool]
    nothing: NotRequired[None]
    # Any JSON
    anything: NotRequired[JsonValue]

ScalarsOutput = str | None

class Tools:
    async def collections(self, args: CollectionsArgs) -> CollectionsOutput: ...
    # Raw constructs outside the supported subset.
    async def degraded(self, args: DegradedArgs) -> DegradedOutput: ...
    # Enums and consts.
    async def literals(self, args: LiteralsArgs) -> LiteralsOutput: ...
    # Every scalar type.
    #
    # With a second paragraph.
    async def scalars(self, args: ScalarsArgs) -> ScalarsOutput: ...
    # An exotic name with an exotic field.
    def __getitem__(self, name: Literal["my-tool"]) -> Callable[[MyToolArgs], Awaitable[MyToolOutput]]: ...

tools: Tools
```