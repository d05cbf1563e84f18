#!/usr/bin/env python3
"""Writes models that nest deep or grow fast, as ONNX text on stdout (the golden tests'
%gen-deep). Usage: gen_deep.py KIND N

  ifs N           N nested Ifs in the main graph (each then_branch holds the next)
  calls N         a chain of N functions, each calling the next once
  doubling N      N functions F_i (a) => (b) { t = F_{i+1}(a)  b = F_{i+1}(t) }: a call
                  tree of 2^N calls (issue 10, rows 6 and 7)
  ifs-in-calls N  N functions, each calling the next inside an If's then_branch: N calls
                  and N subgraph levels along one path
  missing-imports N  N functions whose opset_import lacks the domain of their only node
  wide N          one graph of N Abs nodes in a row (a large output)
"""
import sys

HEADER = '<ir_version: 10, opset_import: ["" : 18, "local" : 1]>'


def function(name, body, inputs="a", outputs="b", imports='["" : 18, "local" : 1]'):
    return '<domain: "local", opset_import: %s>\n%s (%s) => (%s) {\n%s\n}\n' % (imports, name, inputs, outputs, body)


def nested_ifs(n):
    def body(k):
        if k == n:
            return "o%d = Identity (x)" % k
        return ("o%d = If (c) <then_branch: graph = t%d () => (float[2] o%d) { %s }, "
                "else_branch: graph = e%d () => (float[2] z%d) { z%d = Identity (x) }>"
                % (k, k + 1, k + 1, body(k + 1), k + 1, k + 1, k + 1))
    sys.setrecursionlimit(10 * n + 1000)
    return "%s\ng (bool c, float[2] x) => (float[2] o0) {\n  %s\n}\n" % (HEADER, body(0))


def chain(n, calls_per_body):
    out = [HEADER, "g (float[2] x) => (float[2] y) {\n  y = local.F0 (x)\n}\n"]
    for i in range(n):
        if i == n - 1:
            body = "  b = Abs (a)"
        elif calls_per_body == 1:
            body = "  b = local.F%d (a)" % (i + 1)
        else:
            body = "  t = local.F%d (a)\n  b = local.F%d (t)" % (i + 1, i + 1)
        out.append(function("F%d" % i, body))
    return "\n".join(out)


def ifs_in_calls(n):
    out = [HEADER, "g (bool c, float[2] x) => (float[2] y) {\n  y = local.F0 (c, x)\n}\n"]
    for i in range(n):
        inner = "o = Abs (a)" if i == n - 1 else "o = local.F%d (c, a)" % (i + 1)
        body = ("  b = If (c) <then_branch: graph = t () => (float[2] o) { %s }, "
                "else_branch: graph = e () => (float[2] z) { z = Identity (a) }>" % inner)
        out.append(function("F%d" % i, body, inputs="c, a"))
    return "\n".join(out)


def missing_imports(n):
    out = [HEADER, "g (float[2] x) => (float[2] y) {\n%s\n}\n" % "\n".join(
        "  y%d = local.F%d (x)" % (i, i) if i < n - 1 else "  y = local.F%d (x)" % i for i in range(n))]
    for i in range(n):
        out.append(function("F%d" % i, "  b = Abs (a)", imports='["local" : 1]'))
    return "\n".join(out)


def wide(n):
    nodes = "\n".join("  v%d = Abs (v%d)" % (i + 1, i) for i in range(n))
    return "%s\ng (float[2] v0) => (float[2] v%d) {\n%s\n}\n" % (HEADER, n, nodes)


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    text = {
        "ifs": lambda: nested_ifs(n),
        "calls": lambda: chain(n, 1),
        "doubling": lambda: chain(n, 2),
        "ifs-in-calls": lambda: ifs_in_calls(n),
        "missing-imports": lambda: missing_imports(n),
        "wide": lambda: wide(n),
    }[kind]()
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
