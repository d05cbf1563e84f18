"""Analyses at once: the GIL is released while C++ works, and the library is safe for
analyses in several threads, of different models and of the same one: each result (model
and report) is what the same call gives alone. The tsan preset runs this file under
ThreadSanitizer (docs/testing.md, "Concurrency"), which reports unsynchronized accesses
whether or not a result came out wrong."""

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


def without_times(result):
    """A result (bytes, a Report, or both) with the report's times left out (they differ
    from run to run)."""
    def data(report):
        return {k: v for k, v in report.data.items() if k not in ("phases", "pass_times")}
    if isinstance(result, tuple):
        return result[0], data(result[1])
    return result if result is None or isinstance(result, bytes) else data(result)


def every_function(shapeprop, folder):
    """The package's functions (annotate, specialize with each inline policy, check), with
    and without reports, on different models (local functions, a convolution, one that
    needs a rules folder, written into `folder`) and on the same one."""
    import onnx.parser
    L2_bytes, CNN_bytes = L2.read_bytes(), CNN.read_bytes()
    vendor = onnx.parser.parse_model(VENDOR_TEXT).SerializeToString()
    rules = folder / "rules"
    rules.mkdir()
    (rules / "double.rule").write_text("op my.ops.Double\ntype T: tensor(float)\nlayout (T[*S] X) => (T[*S] Y)\n")
    return [
        lambda: shapeprop.infer_shapes(L2_bytes, return_report=True),
        lambda: shapeprop.specialize(L2_bytes, inline="all", return_report=True),
        lambda: shapeprop.specialize(L2_bytes, inline="small"),
        lambda: shapeprop.check_model(L2_bytes, return_report=True),
        lambda: shapeprop.specialize(CNN_bytes, inline="none", return_report=True),
        lambda: shapeprop.check_model(CNN_bytes, return_report=True),
        lambda: shapeprop.infer_shapes(vendor, schemas=[rules], return_report=True),
    ]


# A model with an op outside ONNX's registry, typed by a rule of a folder the call names.
VENDOR_TEXT = """<ir_version: 10, opset_import: ["" : 18, "my.ops" : 1]>
main (float[batch, 5] x) => (y) {
  d = my.ops.Double (x)
  y = Relu (d)
}
"""


def test_every_function_in_four_threads_gives_what_it_gives_alone(shapeprop, tmp_path):
    work = every_function(shapeprop, tmp_path)
    alone = [without_times(job()) for job in work]
    threads_count = 4
    got = {}
    start = threading.Barrier(threads_count)

    def run(t):
        start.wait()
        # Thread t starts at job t: different models at once, and the same model at once.
        got[t] = [without_times(work[(t + i) % len(work)]()) for i in range(len(work))]

    threads = [threading.Thread(target=run, args=(t,)) for t in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for t in range(threads_count):
        for i, result in enumerate(got[t]):
            assert result == alone[(t + i) % len(work)], (t, i)


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
