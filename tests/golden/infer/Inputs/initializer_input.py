"""initializer_input.py INIT INPUT: ONNX's shape_inference_test.prepare_input_initializer_tensors
as text: z = Add(x, y), where x and y are graph inputs declared float[INPUT] (a dim '?' is
unknown) with initializers of shape INIT, all zeros. INIT and INPUT are comma-separated."""
import math
import sys

init = [int(d) for d in sys.argv[1].split(",")]
declared = sys.argv[2]
zeros = ", ".join(["0.0"] * math.prod(init))
shape = ",".join(map(str, init))
print(f"""<ir_version: 8, opset_import: ["" : 18]>
test (float[{declared}] x, float[{declared}] y) => (z)
   <float[{shape}] x = {{{zeros}}}, float[{shape}] y = {{{zeros}}}>
{{
   z = Add (x, y)
}}""")
