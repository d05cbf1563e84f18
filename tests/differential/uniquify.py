"""A copy of an ONNX model that computes the same with every name of a subgraph (and of
a function body's subgraphs) unique in its body: ONNX Runtime refuses some models whose
subgraphs reuse a name of an enclosing graph that ONNX's scoping allows (it checks them in
its own topological order, with Constant nodes made initializers first), so the
differential tests compare models in this form.

usage: python3 uniquify.py IN.onnx OUT.onnx
"""
import sys

import onnx


def _graph_names(g, out):
    for vi in list(g.input) + list(g.output):
        out.add(vi.name)
    for t in g.initializer:
        out.add(t.name)
    for n in g.node:
        out.update(n.input)
        out.update(n.output)
        for a in n.attribute:
            if a.HasField("g"):
                _graph_names(a.g, out)
            for sg in a.graphs:
                _graph_names(sg, out)


class _Renamer:
    def __init__(self, taken):
        self.taken = taken
        self.counter = 0
        self.scopes = []

    def fresh(self, name):
        while True:
            self.counter += 1
            candidate = "%s__u%d" % (name, self.counter)
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def lookup(self, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return name

    def define(self, name, keep):
        if not name:
            return name
        new = name if keep else self.fresh(name)
        self.scopes[-1][name] = new
        return new

    def nodes(self, nodes, keep):
        for n in nodes:
            for i, x in enumerate(n.input):
                if x:
                    n.input[i] = self.lookup(x)
            for a in n.attribute:
                if a.HasField("g"):
                    self.subgraph(a.g)
                for sg in a.graphs:
                    self.subgraph(sg)
            for i, y in enumerate(n.output):
                n.output[i] = self.define(y, keep)

    def subgraph(self, g):
        self.scopes.append({})
        for vi in g.input:
            vi.name = self.define(vi.name, False)
        for t in g.initializer:
            t.name = self.define(t.name, False)
        self.nodes(g.node, False)
        for vi in g.output:
            vi.name = self.lookup(vi.name)
        del g.value_info[:]
        self.scopes.pop()

    def body(self, inputs, nodes):
        # The top level keeps its names; its definitions are its own scope.
        self.scopes = [{}]
        for name in inputs:
            self.scopes[0][name] = name
        self.nodes(nodes, True)


def uniquify(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    taken = set()
    _graph_names(m.graph, taken)
    r = _Renamer(taken)
    r.body([vi.name for vi in m.graph.input] + [t.name for t in m.graph.initializer], m.graph.node)
    del m.graph.value_info[:]
    for f in m.functions:
        names = set(f.input) | set(f.output)
        for n in f.node:
            fake = onnx.GraphProto()
            fake.node.extend([n])
            _graph_names(fake, names)
        r = _Renamer(names)
        r.body(list(f.input), f.node)
    return m


if __name__ == "__main__":
    onnx.save(uniquify(onnx.load(sys.argv[1])), sys.argv[2])
