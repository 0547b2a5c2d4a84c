"""Two interpreters with a GIL each (3.12+). While the perf trampoline is on in the main
interpreter (pyuprof withdraws its eval_frame hook there, for it), a thread of the
subinterpreter (running since before, with pyuprof's hook) calls sub_leaf N times; then the
trampoline goes off again (pyuprof puts its hook back) and main_leaf is called N times. Pipes
order the two so that each run is the same: every call of both must be recorded, whatever
pyuprof had to write and where."""
import os
import sys
import threading

try:
    import _interpreters as si  # 3.13

    def make():
        return si.create("isolated")
except ImportError:
    import _xxsubinterpreters as si  # 3.12

    def make():
        return si.create(isolated=True)

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
done_r, done_w = os.pipe()
SUB = f"""
import os
def sub_leaf(i):
    return i
def sub_work(n):
    t = 0
    for i in range(n):
        t += sub_leaf(i)
    assert t == n * (n - 1) // 2
sub_work(1)
os.write({ready_w}, b"x")
os.read({go_r}, 1)
sub_work({N})
os.write({done_w}, b"x")
"""


def main_leaf(i):
    return i


def main_work(n):
    return sum(main_leaf(i) for i in range(n))


interp = make()
th = threading.Thread(target=si.run_string, args=(interp, SUB))
th.start()
os.read(ready_r, 1)
sys.activate_stack_trampoline("perf")
os.write(go_w, b"x")
os.read(done_r, 1)
sys.deactivate_stack_trampoline()
r = main_work(N)
th.join()
si.destroy(interp)
assert r == N * (N - 1) // 2
print("ok")
