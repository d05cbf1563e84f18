#!/usr/bin/env python3
"""within.py SECONDS MEGABYTES [--cpu] [--baseline 'BASE'] -- CMD...

Runs CMD and fails unless it ended within SECONDS (wall time; with --cpu, the CPU time,
user and system, of CMD and what it waited for, which a loaded machine does not stretch
as it does the wall time) with a peak resident memory
of at most MEGABYTES (of CMD and every process it waited for, as wait4 reports it);
otherwise exits with CMD's status, its output passed through. With --baseline, MEGABYTES
bound what CMD holds beyond the peak of the shell command BASE (its status and output
ignored): a binary's own start differs between builds (an ASan build of onnx-infer-shapes
peaks at 53 MB reading an empty input, a release build at 11 MB), what one input costs
should not. It measures through wait4 rather than GNU time, which the lite configuration's
sid root lacks, so that every configuration runs the tests that bound time and memory.
"""
import os
import subprocess
import sys
import time


def run(argv, quiet):
    """(exit status, wall seconds, CPU seconds, peak resident kilobytes) of argv."""
    sink = subprocess.DEVNULL if quiet else None
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=sink, stderr=sink)
    _, status, usage = os.wait4(child.pid, 0)
    took = time.monotonic() - start
    child.returncode = 0  # reaped here; Popen must not wait for it again
    code = os.waitstatus_to_exitcode(status)
    return (128 - code if code < 0 else code), took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main(args):
    if len(args) < 3:
        sys.exit("usage: within.py SECONDS MEGABYTES [--cpu] [--baseline 'BASE'] -- CMD...")
    seconds, megabytes = float(args[0]), int(args[1])
    args = args[2:]
    cpu = args[0] == "--cpu"
    if cpu:
        args = args[1:]
    baseline_kb = 0
    if args and args[0] == "--baseline":
        _, _, _, baseline_kb = run(["sh", "-c", args[1]], quiet=True)
        args = args[2:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sys.exit("within.py: no command to run")
    status, wall, cpu_time, kilobytes = run(args, quiet=False)
    took = cpu_time if cpu else wall
    command = " ".join(args)
    if took > seconds:
        kind = " of CPU time" if cpu else ""
        print(f"within: '{command}' took {took:.2f} s{kind}, more than {seconds:g} s", file=sys.stderr)
        return 1
    if kilobytes - baseline_kb > megabytes * 1024:
        print(f"within: '{command}' peaked at {kilobytes // 1024} MB, more than {megabytes} MB"
              f" over the baseline's {baseline_kb // 1024} MB", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
