# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Load for tests/targets/gevent_server.py: CONNS connections at once, each sending REQS
requests, one at a time, and checking each answer; then "quit".

    load_client.py PORTFILE CONNS REQS

Request j of connection c asks for n = 10 + (c + j) % 7. Prints what the server must have
counted: "requests R leaf L connections C" (handle: one call per connection, the quitting
one included; parse and compute: R; leaf: L). Exits 1 on a wrong answer.
"""
import os
import socket
import sys
import threading
import time


def expect(n):
    return sum(i * 3 % 11 for i in range(n))


def conn(port, c, reqs, bad):
    with socket.create_connection(("127.0.0.1", port)) as s:
        f = s.makefile("rwb")
        for j in range(reqs):
            n = 10 + (c + j) % 7
            f.write(b"%d\n" % n)
            f.flush()
            got = f.readline()
            if int(got) != expect(n):
                bad.append((c, j, got))


def main():
    path, conns, reqs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for _ in range(600):
        if os.path.exists(path):
            break
        time.sleep(0.1)
    port = int(open(path).read())
    bad = []
    threads = [threading.Thread(target=conn, args=(port, c, reqs, bad)) for c in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"quit\n")
        s.recv(1)
    leaves = sum(10 + (c + j) % 7 for c in range(conns) for j in range(reqs))
    print("requests", conns * reqs, "leaf", leaves, "connections", conns + 1)
    if bad:
        sys.exit("wrong answers: %r" % bad[:5])


if __name__ == "__main__":
    main()
