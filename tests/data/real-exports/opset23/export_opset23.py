"""Exports the opset-23 real exports: transformers models whose attention runs through
torch's scaled_dot_product_attention, which PyTorch 2.14's dynamo exporter writes as
ONNX's Attention op at opset 23 (issue 42: lowering such models for backends).

Run inside the sid root by ../export.sh (PYDEPS --opset23):

    python3 export_opset23.py OUT_DIR

writes OUT_DIR/NAME.dynamo23.onnx (torch.onnx.export(dynamo=True, opset_version=23),
onnxscript's optimizer on, as torch runs it by default) and OUT_DIR/origin.json. Weights
are random from the fixed seed of ../export_models.py, whose wrapper, seed and metadata
stripping it reuses.
"""

import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import export_models as em  # noqa: E402

OPSET = 23


def mistral():
    # Grouped-query attention (4 query heads, 2 key/value heads), rotary embeddings, and a
    # sliding window (4) shorter than the example's sequence (8), so that it masks.
    from transformers import MistralConfig, MistralModel

    cfg = MistralConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=8, vocab_size=128, max_position_embeddings=64,
                        sliding_window=4, use_cache=False, attn_implementation="sdpa")
    return MistralModel(cfg), ("input_ids", "attention_mask")


def clip_text():
    # CLIP's text encoder: a causal mask and the padding mask of attention_mask together.
    from transformers import CLIPTextConfig, CLIPTextModel

    cfg = CLIPTextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                         vocab_size=128, max_position_embeddings=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                         attn_implementation="sdpa")
    return CLIPTextModel(cfg), ("input_ids", "attention_mask")


SPECS = [
    em.Spec("mistral", mistral, lambda: (em.ids(em.BATCH, em.SEQ), em.mask(em.BATCH, em.SEQ)),
            {"input_ids": em.BS, "attention_mask": em.BS}, "transformers"),
    em.Spec("clip_text", clip_text, lambda: (em.ids(em.BATCH, em.SEQ), em.mask(em.BATCH, em.SEQ)),
            {"input_ids": em.BS, "attention_mask": em.BS}, "transformers"),
]


def main(argv):
    out = argv[1]
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    origin = {"versions": em.versions(), "files": {}, "failed": {}}
    for spec in SPECS:
        file = f"{spec.name}.dynamo{OPSET}.onnx"
        path = os.path.join(out, file)
        try:
            options = em.export_dynamo(spec, path + ".tmp", optimize=True, opset_version=OPSET)
            os.replace(path + ".tmp", path)
            dims = {n: {str(a): d for a, d in axes.items()} for n, axes in spec.dims.items()}
            origin["files"][file] = {"model": spec.name, "origin": spec.origin, **options, "dynamic_dims": dims}
            print(f"exported {file} ({os.path.getsize(path)} bytes)", flush=True)
        except Exception as e:  # noqa: BLE001 - recorded, the rest goes on
            if os.path.exists(path + ".tmp"):
                os.remove(path + ".tmp")
            first = next((l for l in str(e).splitlines() if l.strip()), type(e).__name__)
            origin["failed"][file] = f"{type(e).__name__}: {first}"[:400]
            print(f"FAILED {file}: {origin['failed'][file]}", flush=True)
    with open(os.path.join(out, "origin.json"), "w") as f:
        json.dump(origin, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
