# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: async coroutines on asyncio.

asyncio.run() drives main(): gather() of ten tasks, each awaiting two leaves that
suspend once (asyncio.sleep(0)), so every leaf runs twice (start + one resume) and
every task coroutine is resumed by the event loop (its caller is the loop's Handle._run,
the nearest Python frame). Also an async generator consumed with `async for` and an
async context manager. Every coroutine is awaited; nothing is left for shutdown.
"""
import asyncio


async def leaf(i):
    await asyncio.sleep(0)
    return i


async def no_suspend(i):
    return i * 2


async def middle(i):
    a = await leaf(i)
    b = await leaf(i + 1)
    c = await no_suspend(i)
    return a + b + c


async def ticker(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


async def consume():
    total = 0
    async for v in ticker(5):
        total += v
    return total


class Session:
    async def __aenter__(self):
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc):
        return False


async def main():
    results = await asyncio.gather(*[middle(i) for i in range(10)])
    print("gather", results)
    print("consume", await consume())
    async with Session():
        print("session", await no_suspend(21))


if __name__ == "__main__":
    asyncio.run(main())
