"""Two analyses at once: the GIL is released while C++ works, and the library is safe for
two analyses in two threads."""

import sys
import threading
import time

from conftest import CORPUS

L16 = CORPUS / "torchlib-2024-03" / "models" / "transformer_L16.onnx"
L2 = CORPUS / "torchlib-2024-03" / "models" / "transformer_L2.onnx"
CNN = CORPUS / "torch-dynamo" / "dort_debug_7951_conv_maxpool.onnx"


def jobs(shapeprop):
    return [
        lambda: shapeprop.specialize(L16.read_bytes(), inline="all"),
        lambda: shapeprop.infer_shapes(L2.read_bytes()),
        lambda: shapeprop.specialize(CNN.read_bytes(), inline="small"),
        lambda: shapeprop.infer_shapes(L16.read_bytes()),
    ]


def test_two_threads_give_what_one_after_the_other_gives(shapeprop):
    work = jobs(shapeprop)
    sequential = [job() for job in work]
    for first, second in ((0, 1), (2, 3), (0, 3), (1, 2)):
        results = {}
        start = threading.Barrier(2)

        def run(k):
            start.wait()
            for _ in range(2):
                results.setdefault(k, []).append(work[k]())

        threads = [threading.Thread(target=run, args=(k,)) for k in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k in (first, second):
            assert results[k] == [sequential[k]] * 2, k


def test_the_gil_is_released_while_cpp_works(shapeprop):
    # With a switch interval this long, a thread gets the GIL only when its holder lets it
    # go of its own accord (a sleep, or C++ code that releases it). The counting thread
    # then counts during a call only if the call releases the GIL.
    data = L16.read_bytes()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)

    thread = threading.Thread(target=count)
    try:
        thread.start()
        counted = []
        for _ in range(10):
            before = counter[0]
            shapeprop.infer_shapes(data)
            counted.append(counter[0] - before)
            if counted[-1] > 0:
                break
        assert counted[-1] > 0, counted
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
