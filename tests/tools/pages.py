# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Read pyuprof's trampoline pages back in processes: memory against the file behind each.

    pages.py PID...           the processes themselves
    pages.py --tree PID...    and all their descendants

Prints one line per byte that differs ("pid P: page 0xADDR +OFF is XX, not YY") and, last,
"N processes, M pages, D bytes differ". Exits 1 if any byte differs. A process that is gone
meanwhile is skipped. Run it only when no pyuprof is recording those processes: while probes
are in, the kernel rewrites their nops in memory on purpose.
"""
import os
import sys

def differences(pid):
    """([(start, offset, memory byte, file byte)], number of pages) for one process."""
    out, pages = [], 0
    with open("/proc/%d/maps" % pid) as maps:
        lines = [l.split() for l in maps if "/memfd:pyuprof-tramp" in l]
    for f in lines:
        start, end = (int(x, 16) for x in f[0].split("-"))
        # the code page, whatever its size (an older pyuprof's is 4 KiB)
        if f[1] != "r-xp" or int(f[2], 16) != 0:
            continue
        size = end - start
        with open("/proc/%d/map_files/%s" % (pid, f[0]), "rb") as file:
            want = file.read(size)
        with open("/proc/%d/mem" % pid, "rb") as mem:
            mem.seek(start)
            got = mem.read(size)
        pages += 1
        out += [(start, i, got[i], want[i]) for i in range(len(want)) if got[i] != want[i]]
    return out, pages


def children(pid):
    kids = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:
            pass
    return kids


def main():
    args = sys.argv[1:]
    tree = args[:1] == ["--tree"]
    todo = [int(a) for a in args[tree:]]
    seen, npages, ndiff = set(), 0, 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        try:
            diffs, pages = differences(pid)
            if tree:
                todo += children(pid)
        except OSError:
            continue  # gone meanwhile
        seen.add(pid)
        npages += pages
        for start, off, got, want in diffs:
            print("pid %d: page 0x%x +%d is %02x, not %02x" % (pid, start, off, got, want))
        ndiff += len(diffs)
    print("%d processes, %d pages, %d bytes differ" % (len(seen), npages, ndiff))
    sys.exit(1 if ndiff else 0)


if __name__ == "__main__":
    main()
