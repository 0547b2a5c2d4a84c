# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: a gevent StreamServer (Debian's python3-gevent), one greenlet per connection.

    gevent_server.py PORTFILE

Listens on 127.0.0.1 (its port written to PORTFILE once it listens) for lines: a number n is
answered with compute(n), which calls leaf() n times and yields to the hub (gevent.sleep(0))
after every 5th call; "quit" stops the server. Each request takes parse, compute and n leaf
calls, each connection a handle call: tests/tools/load_client.py knows how many. Prints
"served REQUESTS" when stopped.
"""
import os
import sys

import gevent
from gevent.server import StreamServer

served = 0


def leaf(i):
    return i * 3 % 11


def compute(n):
    s = 0
    for i in range(n):
        s += leaf(i)
        if i % 5 == 4:
            gevent.sleep(0)
    return s


def parse(line):
    return int(line)


def handle(sock, addr):
    global served
    f = sock.makefile("rwb")
    for line in f:
        line = line.strip()
        if line == b"quit":
            server.stop(timeout=5)
            break
        f.write(b"%d\n" % compute(parse(line)))
        f.flush()
        served += 1
    f.close()
    sock.close()


def main():
    global server
    server = StreamServer(("127.0.0.1", 0), handle)
    server.start()
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.address[1])
    os.rename(tmp, sys.argv[1])
    server.serve_forever()
    print("served", served)


if __name__ == "__main__":
    main()
