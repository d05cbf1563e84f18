"""gen_llm_external.py OUT.onnxtxt LAYERS HIDDEN: a decoder-shaped model (LAYERS blocks of
attention projections and a 4x MLP on float[batch,seq,HIDDEN]) whose weights are external
data in one file, weights.bin beside OUT, each tensor at its own offset. Prints the bytes
the weights take; the file itself is made by the caller (a sparse file: no disk used)."""

import sys

out, layers, hidden = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
offset = 0
weights = []


def weight(name, rows, cols):
    global offset
    length = rows * cols * 4
    weights.append('float[%d,%d] %s = ["location": "weights.bin", "offset": "%d", "length": "%d"]'
                   % (rows, cols, name, offset, length))
    offset += length
    return name


nodes = []
h = "x"
for i in range(layers):
    q, k, v, o = (weight("l%d_w%s" % (i, p), hidden, hidden) for p in "qkvo")
    up, down = weight("l%d_up" % i, hidden, 4 * hidden), weight("l%d_down" % i, 4 * hidden, hidden)
    nodes += [
        "l%d_q = MatMul (%s, %s)" % (i, h, q),
        "l%d_k = MatMul (%s, %s)" % (i, h, k),
        "l%d_v = MatMul (%s, %s)" % (i, h, v),
        "l%d_kt = Transpose <perm = [0, 2, 1]> (l%d_k)" % (i, i),
        "l%d_s = MatMul (l%d_q, l%d_kt)" % (i, i, i),
        "l%d_p = Softmax <axis = -1> (l%d_s)" % (i, i),
        "l%d_a = MatMul (l%d_p, l%d_v)" % (i, i, i),
        "l%d_o = MatMul (l%d_a, %s)" % (i, i, o),
        "l%d_r = Add (%s, l%d_o)" % (i, h, i),
        "l%d_u = MatMul (l%d_r, %s)" % (i, i, up),
        "l%d_g = Relu (l%d_u)" % (i, i),
        "l%d_d = MatMul (l%d_g, %s)" % (i, i, down),
        "l%d_h = Add (l%d_r, l%d_d)" % (i, i, i),
    ]
    h = "l%d_h" % i
nodes.append("y = Identity (%s)" % h)
with open(out, "w") as f:
    f.write('<\n   ir_version: 10,\n   opset_import: ["" : 18]\n>\n')
    f.write("main (float[batch,seq,%d] x) => (float[batch,seq,%d] y)\n   <%s>\n{\n" % (hidden, hidden, ", ".join(weights)))
    for n in nodes:
        f.write("   %s\n" % n)
    f.write("}\n")
print(offset)
