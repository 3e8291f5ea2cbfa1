# Tasks and sleeps work inside the run and order by delay; a task still pending when the
# program returns is dropped with the interpreter.
import asyncio

order = []


async def later(delay, name):
    await asyncio.sleep(delay)
    order.append(name)


await asyncio.gather(later(0.02, "second"), later(0.001, "first"))
asyncio.ensure_future(later(60, "never"))
return order
