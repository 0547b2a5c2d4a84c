# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fidelity workload: generator resumes and an asyncio event loop (tasks, futures, awaits: the
event loop's own Python code makes most of the calls). section() is the timed section."""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fidelity  # noqa: E402


def numbers(n):
    for i in range(n):
        yield i


def squares(n):
    for i in numbers(n):
        yield i * i


async def leaf(x):
    await asyncio.sleep(0)
    return x + 1


async def worker(k, n):
    s = 0
    for i in range(n):
        s += await leaf(i)
    return s


async def main(n):
    return sum(await asyncio.gather(*(worker(k, n // 8) for k in range(8))))


def section(n):
    total = sum(squares(n))
    total += asyncio.run(main(n // 4))
    return total


n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
loop = asyncio.new_event_loop()  # asyncio's imports and set-up, outside the section
loop.close()
print("elapsed %.6f ref %.6f" % _fidelity.run(section, n))
