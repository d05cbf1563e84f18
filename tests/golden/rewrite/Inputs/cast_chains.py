#!/usr/bin/env python3
"""Writes, as ONNX text on stdout, a model of every chain of three Casts over the types
cast-elim reasons about (cast_chains.test): for each (A, B, C) with A != B != C,
o = Cast<float>(Cast<C>(Cast<B>(Cast<A>(x)))) from one float input x. Each chain is one
output, so a rewrite of any of them that changes a value shows at that output."""
import itertools

TYPES = [("float16", 10), ("bfloat16", 16), ("float", 1), ("double", 11), ("int8", 3), ("uint8", 2),
         ("int16", 5), ("uint16", 4), ("int32", 6), ("uint32", 12), ("int64", 7), ("uint64", 13), ("bool", 9)]

outputs, nodes = [], []
for k, (a, b, c) in enumerate((t for t in itertools.product(TYPES, repeat=3) if t[0] != t[1] != t[2])):
    outputs.append("float[24] o%d" % k)
    nodes.append("   a%d = Cast <to: int = %d> (x)\n   b%d = Cast <to: int = %d> (a%d)\n"
                 "   c%d = Cast <to: int = %d> (b%d)\n   o%d = Cast <to: int = 1> (c%d)"
                 % (k, a[1], k, b[1], k, k, c[1], k, k, k))
print('<\n   ir_version: 10,\n   opset_import: ["" : 18]\n>')
print("main (float[24] x) => (%s)\n{\n%s\n}" % (", ".join(outputs), "\n".join(nodes)))
