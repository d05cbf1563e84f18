#!/usr/bin/env python3
"""Differential test of folding across scopes: random models of nested Ifs (decided and
undecided) and model-local functions that branch on their input's rank, whose names
clash across scopes wherever ONNX allows (a branch defines a name its enclosing graph
defines later, sibling branches reuse names, a function's names are the caller's), are
run through onnx-infer-shapes in several modes and compared with the input on ONNX
Runtime (tools/equiv).

ONNX Runtime checks a subgraph's names against the enclosing graph's in its own
topological order, with Constant nodes made initializers first: a model whose branch
defines a name that a later, independent node of the enclosing graph defines may load
or not. So each node of a graph reads the one before it (what follows an If depends on
it), and constants take names no scope shares.

ONNX Runtime may refuse such a model (it checks a subgraph's names against the
enclosing graph's in its own topological order, with Constant nodes made initializers
first), so both sides are compared in a form with every subgraph name unique
(uniquify.py), on ONNX Runtime without its graph optimizations (its inlining of a
constant If fails on some nested branches). Each output must also pass ONNX's full check
(--verify-full-check). A model ONNX Runtime cannot run even so is skipped and counted;
more than a fifth skipped fails.

usage: nested_scopes.py TOOL EQUIV_JS [--models N] [--seed S] [--keep DIR] [--node NODE]
exit status: 0 when every output model computes what its input does, 1 otherwise.
Needs the onnx package (for uniquify.py).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from uniquify import uniquify  # noqa: E402

POOL = ["a", "b", "c", "t", "u", "w", "z", "o", "r", "k", "m", "s", "y1"]
UNARY = ["Neg", "Abs", "Relu", "Sigmoid", "Tanh"]
BINARY = ["Add", "Mul", "Sub", "Max", "Min"]
MODES = [["--mode", "specialize"], ["--mode", "inline"], ["--passes", "fold"], ["--passes", "fold,dce,cse"],
         ["--mode", "inline", "--inline", "small:4"]]


class Scope:
    """One graph being generated: the names it defines, in order, and its parent."""

    def __init__(self, parent, indent):
        self.parent = parent
        self.indent = indent
        self.defined = []  # every name defined here, in order
        self.floats = []   # those holding a float[2,3] value
        self.prev = None   # the last float value defined here, which the next node reads
        self.lines = []

    def taken(self, name):
        s = self
        while s:
            if name in s.defined:
                return True
            s = s.parent
        return False

    def visible_floats(self):
        out, s = [], self
        while s:
            out += s.floats
            s = s.parent
        return out


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.fresh = 0
        self.graphs = 0
        self.functions = []  # (name, text)

    def name(self, scope, shared=True):
        # A pool name free in this scope and its ancestors (so far): clashes with what an
        # enclosing graph defines later, and with sibling scopes, are kept. Unshared: a
        # name no other scope has (for constants).
        free = [n for n in POOL if not scope.taken(n)]
        if shared and free and self.rng.random() < 0.85:
            n = self.rng.choice(free)
        else:
            self.fresh += 1
            n = "v%d" % self.fresh
        scope.defined.append(n)
        return n

    def first_operand(self, scope):
        return scope.prev if scope.prev else self.operand(scope)

    def emit(self, scope, line):
        scope.lines.append(" " * scope.indent + line)

    def operand(self, scope):
        return self.rng.choice(scope.visible_floats())

    def float_value(self, scope):
        first = self.first_operand(scope)
        n = self.name(scope)
        r = self.rng.random()
        if r < 0.35:
            self.emit(scope, "%s = %s (%s)" % (n, self.rng.choice(UNARY), first))
        elif r < 0.8 or not self.functions:
            pair = [first, self.operand(scope)]
            self.rng.shuffle(pair)
            self.emit(scope, "%s = %s (%s, %s)" % (n, self.rng.choice(BINARY), pair[0], pair[1]))
        else:
            f = self.rng.choice(self.functions)
            self.emit(scope, "%s = local.%s (%s)" % (n, f, first))
        scope.floats.append(n)
        scope.prev = n
        return n

    def condition(self, scope):
        kind = self.rng.random()
        first = self.first_operand(scope)
        if kind < 0.3:
            c = self.name(scope, shared=False)
            self.emit(scope, "%s = Constant <value = bool {%d}> ()" % (c, self.rng.randint(0, 1)))
        elif kind < 0.7:
            size = self.name(scope)
            self.emit(scope, "%s = Size (%s)" % (size, first))
            want = self.name(scope, shared=False)
            self.emit(scope, "%s = Constant <value = int64 {%d}> ()" % (want, self.rng.choice([5, 6])))
            c = self.name(scope)
            self.emit(scope, "%s = Equal (%s, %s)" % (c, size, want))
        else:
            total = self.name(scope)
            self.emit(scope, "%s = ReduceSum <keepdims = 0> (%s)" % (total, first))
            zero = self.name(scope, shared=False)
            self.emit(scope, "%s = Constant <value = float {0}> ()" % zero)
            c = self.name(scope)
            self.emit(scope, "%s = Greater (%s, %s)" % (c, total, zero))
        return c

    def branch(self, scope, depth):
        inner = Scope(scope, scope.indent + 3)
        for _ in range(self.rng.randint(1, 3)):
            self.statement(inner, depth + 1)
        source = self.first_operand(inner)
        out = self.name(inner)
        self.emit(inner, "%s = Identity (%s)" % (out, source))
        self.graphs += 1
        head = "g%d () => (float[2,3] %s) {" % (self.graphs, out)
        return head, inner.lines

    def if_node(self, scope, depth):
        c = self.condition(scope)
        then_head, then_lines = self.branch(scope, depth)
        else_head, else_lines = self.branch(scope, depth)
        n = self.name(scope)
        pad = " " * scope.indent
        text = "%s = If (%s) <then_branch = %s\n%s\n%s}, else_branch = %s\n%s\n%s}>" % (
            n, c, then_head, "\n".join(then_lines), pad, else_head, "\n".join(else_lines), pad)
        self.emit(scope, text)
        scope.floats.append(n)
        scope.prev = n

    def statement(self, scope, depth):
        if depth < 3 and self.rng.random() < 0.35:
            self.if_node(scope, depth)
        else:
            self.float_value(scope)

    def function(self, index):
        # What torchlib writes: a body generic over rank, branching on Size(Shape(x)).
        name = "f%d" % index
        body = Scope(None, 3)
        body.defined.append("x")
        body.floats.append("x")
        shape, rank, two = self.name(body), self.name(body), self.name(body, shared=False)
        self.emit(body, "%s = Shape (x)" % shape)
        self.emit(body, "%s = Size (%s)" % (rank, shape))
        self.emit(body, "%s = Constant <value = int64 {%d}> ()" % (two, self.rng.choice([2, 3])))
        c = self.name(body)
        self.emit(body, "%s = Equal (%s, %s)" % (c, rank, two))
        saved = self.functions
        self.functions = []  # no calls inside function bodies
        then_head, then_lines = self.branch(body, 1)
        else_head, else_lines = self.branch(body, 1)
        self.functions = saved
        y = self.name(body)
        self.emit(body, "%s = If (%s) <then_branch = %s\n%s\n   }, else_branch = %s\n%s\n   }>" % (
            y, c, then_head, "\n".join(then_lines), else_head, "\n".join(else_lines)))
        text = "<\n   domain: \"local\",\n   opset_import: [\"\" : 18]\n>\n%s (x) => (%s) {\n%s\n}\n" % (
            name, y, "\n".join(body.lines))
        self.functions.append(name)
        return text

    def model(self):
        functions = [self.function(i) for i in range(self.rng.randint(0, 2))]
        top = Scope(None, 3)
        for x in ["x", "xb"]:
            top.defined.append(x)
            top.floats.append(x)
        for _ in range(self.rng.randint(3, 8)):
            self.statement(top, 0)
        last = top.floats[-1]
        others = [n for n in top.floats if n not in ("x", "xb", last)]
        outs = [last] + self.rng.sample(others, min(len(others), self.rng.randint(0, 2)))
        head = "<\n   ir_version: 10,\n   opset_import: [\"\" : 18, \"local\" : 1]\n>\n"
        graph = "main (float[2,3] x, float[2,3] xb) => (%s) {\n%s\n}\n" % (
            ", ".join("float[2,3] " + o for o in outs), "\n".join(top.lines))
        return head + graph + "\n".join(functions)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def unique_copy(path):
    out = path[:-len(".onnx")] + ".u.onnx"
    onnx.save(uniquify(onnx.load(path)), out)
    return out


NODE = "node"


def equiv(equiv_js, a, b):
    e = run([NODE, equiv_js, "--quiet", "--no-optimize", "--seeds", "1,2", a, b])
    return None if e.returncode == 0 else (e.stdout + e.stderr).strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("equiv")
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="directory to keep the failing models in")
    ap.add_argument("--node", default="node", help="the Node.js that runs EQUIV_JS")
    args = ap.parse_args()
    global NODE
    NODE = args.node
    failures = 0
    checked = 0
    skipped = 0
    with tempfile.TemporaryDirectory() as work:
        for i in range(args.models):
            seed = args.seed * 100003 + i
            text = Gen(random.Random(seed)).model()
            src = os.path.join(work, "m%d.onnxtxt" % i)
            with open(src, "w") as f:
                f.write(text)
            ref = os.path.join(work, "m%d.in.onnx" % i)
            r = run([args.tool, src, "--no-infer", "-q", "-o", ref])
            if r.returncode != 0:
                print("seed %d: the generated model is refused (a bug of the generator):\n%s\n%s" % (seed, r.stderr, text))
                failures += 1
                continue
            ref_unique = unique_copy(ref)
            refused = equiv(args.equiv, ref_unique, ref_unique)
            if refused:
                print("seed %d: skipped, ONNX Runtime cannot run it: %s" % (seed, refused.splitlines()[0][:200]))
                skipped += 1
                continue
            for mode in MODES:
                out = os.path.join(work, "m%d.out.onnx" % i)
                r = run([args.tool, src, "-q", "--verify-full-check", "-o", out] + mode)
                problem = None
                if r.returncode != 0:
                    problem = "exit %d: %s" % (r.returncode, r.stderr.strip())
                else:
                    problem = equiv(args.equiv, ref_unique, unique_copy(out))
                checked += 1
                if problem:
                    failures += 1
                    print("seed %d, %s: %s" % (seed, " ".join(mode), problem))
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        with open(os.path.join(args.keep, "seed%d.onnxtxt" % seed), "w") as f:
                            f.write(text)
    print("nested_scopes: %d models (%d skipped), %d runs compared on ONNX Runtime, %d failed" %
          (args.models, skipped, checked, failures))
    if skipped * 5 > args.models:
        print("nested_scopes: more than a fifth of the models skipped: the generator is broken")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
