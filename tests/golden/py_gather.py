## { "tools": ["a", "b", "c"] }
# Overlapping safe calls under asyncio.gather resolve to their own values in program order.
import asyncio

a, b, c = await asyncio.gather(tools.a({"n": 1}), tools.b({"n": 2}), tools.c({"n": 3}))
return [a, b, c]
