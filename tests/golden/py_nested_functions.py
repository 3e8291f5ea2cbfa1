## { "tools": ["double"] }
# Top-level await and return work inside helpers and comprehensions too.
import asyncio


async def twice(n):
    return (await tools.double({"n": n}))["n"] * 2


total = sum(await asyncio.gather(*(twice(n) for n in range(3))))
squares = [n * n for n in range(4)]
return {"total": total, "squares": squares}
