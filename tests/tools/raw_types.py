# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Reads a pyuprof raw recording (user/profile/raw.h: a 64-byte header, then records each after its
u32 size, in one gzip stream) on its own, without pyuprof.

    raw_types.py RAW                 prints "TYPE COUNT" for each record type, by type
    raw_types.py RAW --as-v3 OUT     writes RAW as format 3 made it: RAW_CALIB without
                                     done_ns, every EV_RETURN_DONE(_NONE) an EV_RETURN,
                                     no RAW_FLUSH, no EV_RESUME (format 5), no
                                     RAW_GAUGE (format 8)
    raw_types.py RAW --as-v7 OUT     writes RAW as format 7 made it: RAW_CALIB without
                                     gauge_ps, no RAW_GAUGE
    raw_types.py RAW --steps-back    prints, for each thread, the largest step back of the
                                     times of its calls and returns (ns; 0: none), "TID NS"
"""
import collections
import gzip
import struct
import sys

EV_RETURN, EV_RETURN_DONE, EV_RETURN_DONE_NONE, EV_RESUME, RAW_CALIB, RAW_FLUSH = 2, 9, 10, 11, 104, 106
RAW_GAUGE = 107
# the records of a thread's calls and returns: struct ev_call and struct ev_return, a u32 type,
# a u32 tid and a u64 time first (include/pyuprof.h)
TIMED = (1, 2, 5, 6, 9, 10)


def records(data):
    pos = 0
    while pos < len(data):
        (size,) = struct.unpack_from("<I", data, pos)
        yield data[pos + 4:pos + 4 + size]
        pos += 4 + size


def main():
    with open(sys.argv[1], "rb") as f:
        header = f.read(64)
        data = gzip.decompress(f.read())
    if len(sys.argv) == 2:
        counts = collections.Counter(struct.unpack_from("<I", r)[0] for r in records(data))
        for t in sorted(counts):
            print(t, counts[t])
        return
    if sys.argv[2] == "--steps-back":
        last, back = {}, collections.Counter()
        for r in records(data):
            (t, tid) = struct.unpack_from("<II", r)
            if t not in TIMED or len(r) < 16:
                continue
            (ts,) = struct.unpack_from("<Q", r, 8)
            back[tid] = max(back[tid], last.get(tid, ts) - ts)
            last[tid] = max(last.get(tid, ts), ts)
        for tid in sorted(last):
            print(tid, back[tid])
        return
    assert sys.argv[2] in ("--as-v3", "--as-v7")
    v3 = sys.argv[2] == "--as-v3"
    header = bytearray(header)
    struct.pack_into("<I", header, 8, 3 if v3 else 7)
    out = bytearray()
    for r in records(data):
        (t,) = struct.unpack_from("<I", r)
        if t == RAW_GAUGE or (v3 and t in (RAW_FLUSH, EV_RESUME)):
            continue
        if t == RAW_CALIB:
            r = r[:24 if v3 else 48]
        elif v3 and t in (EV_RETURN_DONE, EV_RETURN_DONE_NONE):
            r = struct.pack("<I", EV_RETURN) + r[4:]
        out += struct.pack("<I", len(r)) + r
    with open(sys.argv[3], "wb") as f:
        f.write(bytes(header) + gzip.compress(bytes(out)))


main()
