"""newer_model.py KIND IR OPSET: a small model one version past what an ONNX reading IR
versions up to IR and ai.onnx opsets up to OPSET knows: KIND ir (its ir_version), opset
(the graph's ai.onnx import) or function-opset (a model-local function's import)."""
import sys

kind, ir, opset = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model_ir = ir + 1 if kind == "ir" else ir
graph_opset = opset + 1 if kind == "opset" else opset
function_opset = opset + 1 if kind == "function-opset" else opset
print(f"""<ir_version: {model_ir}, opset_import: ["" : {graph_opset}, "local" : 1]>
g (float[2] x) => (float[2] y) {{
  y = local.F (x)
}}
<domain: "local", opset_import: ["" : {function_opset}]>
F (a) => (b) {{
  b = Abs (a)
}}""")
