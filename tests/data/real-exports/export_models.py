"""Exports the real-export corpus: small models, random weights, three ways each.

Run inside the sid root by export.sh (python3-torch, python3-transformers,
python3-torchvision, onnxscript and onnx_ir on PYTHONPATH):

    python3 export_models.py OUT_DIR [MODEL...]

For every model NAME it writes, in OUT_DIR (the ways its Spec lists; all three but for
two_blocks, which is here for TorchScript's declarations):
  NAME.dynamo.onnx       torch.onnx.export(dynamo=True, optimize=False), dynamic dims
  NAME.dynamo-opt.onnx   the same with optimize=True (onnxscript's optimizer)
  NAME.ts-functions.onnx the TorchScript exporter (dynamo=False) with
                         export_modules_as_functions=True and dynamic_axes
and OUT_DIR/origin.json: per file, the versions, exporter, options and dynamic dims, and
per failed export its error. Weights are random from a fixed seed and built from the
config (nothing is downloaded); configs are tiny so that every file stays small.
"""

import contextlib
import dataclasses
import io
import json
import os
import re
import sys
import traceback
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20260
BATCH, SEQ = 2, 8


# ------------------------------------------------------------------ small modules


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.avg = nn.AvgPool2d(3, stride=2, padding=1)

    def forward(self, x):
        y = self.pool(F.relu(self.bn(self.conv1(x))))
        return self.avg(self.conv2(y)).flatten(2)


class BiLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(16, 4)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.proj(h).reshape(x.shape[0], -1)


class MaskedAttention(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        keep = mask[:, None, None, :].bool()
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~(keep & causal), float("-inf"))
        probs = torch.nan_to_num(scores.softmax(-1))
        y = (probs @ v).transpose(1, 2).reshape(b, s, d)
        return self.out(y)


class ChunkSplit(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        c, d, e = torch.split(x, [1, 2, 3], dim=2)
        halves = torch.cat([b, a], dim=1)
        return halves * 2, torch.cat([e, c, d], dim=2), a.sum(1) - b.mean(1)


class GatherScatter(nn.Module):
    def forward(self, x, idx):
        g = torch.gather(x, 1, idx)
        s = torch.zeros_like(x).scatter_add(1, idx, g)
        t = x.index_select(1, idx[0, :, 0].clamp(0, x.shape[1] - 1))
        return g, s, t.sum(-1)


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(F.relu(self.conv(x)))


class TwoBlocks(nn.Module):
    """One block class called on two heights (issue 44): TorchScript's exporter declares one
    dim_param for both calls' outputs, which ONNX Runtime sizes 6 and 3 at height 37."""

    def __init__(self):
        super().__init__()
        self.first = Block(3)
        self.second = Block(3)

    def forward(self, x):
        return self.first(x[:, :, :12]), self.second(x[:, :, :6])


class ConvGRU(nn.Module):
    """A Conv1d over time feeding a bidirectional 2-layer GRU, then a strided pooling over
    time (floor dims). With a strided conv before the GRU, torch.export fails (its GRU
    decomposition does not take the floor expression for the time dim)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.gru = nn.GRU(8, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.pool = nn.AvgPool1d(3, stride=2, padding=1)
        self.proj = nn.Linear(16, 4)

    def forward(self, x):
        y = F.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        h, last = self.gru(y)
        pooled = self.pool(h.transpose(1, 2)).transpose(1, 2)
        return self.proj(pooled), last.transpose(0, 1).flatten(1)


class PairSplit(nn.Module):
    """RAFT-style: frame pairs stacked on the batch dim, cut to an even count and split in
    two (a chunk of 2*floor(batch/2)); the width split in halves of floor(width/2) and the
    rest; the height cut to at most 16 (a Min dim)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def forward(self, x):
        n = x.shape[0] // 2
        f = self.enc(x[: 2 * n])
        f1, f2 = f.chunk(2, dim=0)
        corr = (f1 * f2).sum(1, keepdim=True) / 8 ** 0.5
        w = x.shape[3]
        left, right = torch.split(x, [w // 2, w - w // 2], dim=3)
        top = x[:, :, :16]
        return corr, torch.cat([right, left], dim=3), top.mean(1)


class ShapeArith(nn.Module):
    """Dims torch builds from shapes (issue 52): positions one longer than the sequence
    (arange(seq + 1)), a flatten to 2*seq*batch rows, and values that are seq again after
    a round trip: concatenated, padded, reshaped and sliced with ::2."""

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        pos = torch.arange(s + 1, device=x.device).unsqueeze(0).expand(b, -1)
        both = torch.cat([x, x], dim=1)
        rows = both.reshape(2 * s * b, x.shape[2])
        padded = F.pad(x, (0, 0, 0, 1))
        back = padded[:, :-1] + both[:, ::2] + both[:, 1::2]
        pairs = both.reshape(b, s, 2, x.shape[2]).sum(2)
        return pos, rows, back * pairs, padded.reshape(b, -1).sum(1)


class CondBranches(nn.Module):
    """torch.cond on a data-dependent predicate (issue 52: OnnxSlim left fewer nodes than
    --mode inline on such exports, through constants inside the branches): each branch
    has constants of its own, one shared with the other, and a shape computation."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        def positive(x):
            y = self.lin(x) * 2.0 + torch.ones(8)
            return y.reshape(x.shape[0], -1, 4).sum(2)

        def negative(x):
            y = self.lin(x) - torch.arange(8, dtype=x.dtype) * 2.0
            return y[:, ::2] + torch.ones(4)

        return torch.cond(x.sum() > 0, positive, negative, (x,))


class Detector(nn.Module):
    """A tiny one-stage detector: a strided conv backbone, per-location box deltas and
    scores, torchvision's batched_nms over all images' boxes (NonMaxSuppression), and
    torchvision's roi_align of the kept boxes on the feature map (RoiAlign)."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.box = nn.Conv2d(8, 4, 1)
        self.score = nn.Conv2d(8, 1, 1)

    def forward(self, images):
        from torchvision.ops import batched_nms, roi_align

        f = self.backbone(images)
        b, _, h, w = f.shape
        ys = (torch.arange(h, dtype=torch.float32) + 0.5) * 4
        xs = (torch.arange(w, dtype=torch.float32) + 0.5) * 4
        cy, cx = torch.meshgrid(ys, xs, indexing="ij")
        centers = torch.stack([cx, cy, cx, cy], dim=-1).reshape(1, -1, 4)
        half = torch.tensor([-6.0, -6.0, 6.0, 6.0])
        deltas = self.box(f).permute(0, 2, 3, 1).reshape(b, -1, 4)
        boxes = (centers + half * deltas.clamp(-2, 2).exp()).reshape(-1, 4)
        scores = self.score(f).sigmoid().reshape(-1)
        image = torch.arange(b)[:, None].expand(b, h * w).reshape(-1)
        keep = batched_nms(boxes, scores, image, 0.3)
        rois = torch.cat([image[keep].to(torch.float32)[:, None], boxes[keep]], dim=1)
        pooled = roi_align(f, rois, output_size=(4, 4), spatial_scale=0.25, sampling_ratio=2, aligned=True)
        return boxes[keep], scores[keep], pooled.flatten(1)


class KVDecode(nn.Module):
    """One decode step of a decoder-only transformers model with its KV cache: the new
    token's ids and every layer's past keys and values as inputs (put into a DynamicCache),
    the hidden state and every layer's present keys and values as outputs."""

    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, *past):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True, return_dict=True)
        present = []
        for layer in out.past_key_values.layers:
            present += [layer.keys, layer.values]
        return (out.last_hidden_state, *present)


# ------------------------------------------------------------------ transformers


def _hf_kwargs(**extra):
    return dict(use_cache=False, return_dict=False, **extra)


def gpt2():
    from transformers import GPT2Config, GPT2Model

    cfg = GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=128, n_positions=64, n_inner=64,
                     bos_token_id=0, eos_token_id=0, use_cache=False, attn_implementation="eager")
    return GPT2Model(cfg), ("input_ids", "attention_mask")


def bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     vocab_size=128, max_position_embeddings=64, attn_implementation="eager")
    return BertModel(cfg), ("input_ids", "attention_mask", "token_type_ids")


def deberta_v2():
    from transformers import DebertaV2Config, DebertaV2Model

    cfg = DebertaV2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                          vocab_size=128, max_position_embeddings=64, relative_attention=True, position_buckets=8,
                          max_relative_positions=16, pos_att_type=["p2c", "c2p"], type_vocab_size=0)
    return DebertaV2Model(cfg), ("input_ids", "attention_mask")


def albert():
    from transformers import AlbertConfig, AlbertModel

    cfg = AlbertConfig(embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, vocab_size=128, max_position_embeddings=64, attn_implementation="eager")
    return AlbertModel(cfg), ("input_ids", "attention_mask")


def llama():
    from transformers import LlamaConfig, LlamaModel

    cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, vocab_size=128, max_position_embeddings=64, use_cache=False,
                      attn_implementation="eager")
    return LlamaModel(cfg), ("input_ids", "attention_mask")


def t5():
    from transformers import T5Config, T5Model

    cfg = T5Config(d_model=32, d_ff=64, d_kv=16, num_layers=2, num_decoder_layers=2, num_heads=2,
                   vocab_size=128, use_cache=False, attn_implementation="eager")
    return T5Model(cfg), ("input_ids", "attention_mask", "decoder_input_ids")


def bart():
    from transformers import BartConfig, BartModel

    cfg = BartConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                     max_position_embeddings=64, use_cache=False, attn_implementation="eager")
    return BartModel(cfg), ("input_ids", "attention_mask", "decoder_input_ids")


def vit():
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                    image_size=32, patch_size=8, num_channels=3, attn_implementation="eager")
    return ViTModel(cfg, add_pooling_layer=False), ("pixel_values",)


def whisper():
    from transformers import WhisperConfig, WhisperModel

    cfg = WhisperConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                        num_mel_bins=8, max_source_positions=16, max_target_positions=32, pad_token_id=1,
                        bos_token_id=2, eos_token_id=2, decoder_start_token_id=3, use_cache=False,
                        attn_implementation="eager")
    return WhisperModel(cfg), ("input_features", "decoder_input_ids")


def wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=2, vocab_size=32, attn_implementation="eager")
    return Wav2Vec2Model(cfg), ("input_values",)


def wav2vec2_conformer():
    from transformers import Wav2Vec2ConformerConfig, Wav2Vec2ConformerModel

    cfg = Wav2Vec2ConformerConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                  conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                                  num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, vocab_size=32,
                                  conv_depthwise_kernel_size=7, position_embeddings_type="relative",
                                  max_source_positions=64)
    return Wav2Vec2ConformerModel(cfg), ("input_values",)


def mixtral():
    from transformers import MixtralConfig, MixtralModel

    cfg = MixtralConfig(hidden_size=32, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                        num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2, vocab_size=128,
                        max_position_embeddings=64, use_cache=False, attn_implementation="eager",
                        experts_implementation="batched_mm")
    # batched_mm: the experts of each token's top 2 gathered and multiplied in batches. The
    # default (grouped_mm) calls transformers' own op, which the dynamo exporter has no ONNX
    # function for; "eager" loops over nonzero() experts, which torch.export refuses.
    return MixtralModel(cfg), ("input_ids", "attention_mask")


KV_LAYERS = 2


def qwen2_kv():
    from transformers import Qwen2Config, Qwen2Model

    cfg = Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=KV_LAYERS, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=128, max_position_embeddings=64, use_cache=True,
                      attn_implementation="eager")
    names = ("input_ids",) + tuple(f"past_{kv}.{i}" for i in range(KV_LAYERS) for kv in ("key", "value"))
    return KVDecode(Qwen2Model(cfg), KV_LAYERS), names


def marian():
    from transformers import MarianConfig, MarianMTModel

    cfg = MarianConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                       decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=128,
                       decoder_vocab_size=128, max_position_embeddings=64, pad_token_id=1, eos_token_id=0,
                       decoder_start_token_id=1, use_cache=False, attn_implementation="eager")
    return MarianMTModel(cfg), ("input_ids", "attention_mask", "decoder_input_ids")


def gpt_neox():
    from transformers import GPTNeoXConfig, GPTNeoXModel

    cfg = GPTNeoXConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                        rotary_pct=0.5, vocab_size=128, max_position_embeddings=64, use_parallel_residual=True,
                        use_cache=False, attn_implementation="eager")
    return GPTNeoXModel(cfg), ("input_ids", "attention_mask")


def gemma2():
    from transformers import Gemma2Config, Gemma2Model

    cfg = Gemma2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=16, vocab_size=128, max_position_embeddings=64,
                       sliding_window=4, attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                       use_cache=False, attn_implementation="eager")
    return Gemma2Model(cfg), ("input_ids", "attention_mask")


# ------------------------------------------------------------------ torchvision


def resnet18():
    # torchvision's ResNet18 (BasicBlock, [2, 2, 2, 2]) at 1/16 of its widths, so that the
    # random weights stay small; the module classes are torchvision's own.
    from torchvision.models.resnet import BasicBlock, ResNet

    class NarrowResNet(ResNet):
        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            if planes == 64:
                self.inplanes = 4
            return super()._make_layer(block, planes // 16, blocks, stride, dilate)

    m = NarrowResNet(BasicBlock, [2, 2, 2, 2], num_classes=10)
    m.conv1 = nn.Conv2d(3, 4, kernel_size=7, stride=2, padding=3, bias=False)
    m.bn1 = nn.BatchNorm2d(4)
    m.fc = nn.Linear(32, 10)
    return m, ("images",)


def mobilenet_v3():
    from torchvision.models import mobilenet_v3_small

    return mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.125), ("images",)


def shufflenet_v2():
    # torchvision's ShuffleNetV2 (channel split and channel shuffle) at tiny widths.
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    return ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 64], num_classes=10), ("images",)


def lraspp():
    # torchvision's LR-ASPP segmentation head on its dilated MobileNetV3-Large backbone at
    # 1/8 of its widths; the head upsamples to the input's size (Resize to a Shape slice).
    from torchvision.models import mobilenet_v3_large
    from torchvision.models.segmentation.lraspp import _lraspp_mobilenetv3

    backbone = mobilenet_v3_large(weights=None, width_mult=0.125, dilated=True)
    model = _lraspp_mobilenetv3(backbone, num_classes=3)
    model.classifier.cbr[0] = nn.Conv2d(model.classifier.cbr[0].in_channels, 16, 1, bias=False)
    model.classifier.cbr[1] = nn.BatchNorm2d(16)
    model.classifier.scale[1] = nn.Conv2d(model.classifier.scale[1].in_channels, 16, 1, bias=False)
    model.classifier.high_classifier = nn.Conv2d(16, 3, 1)
    return model, ("images",)


# ------------------------------------------------------------------ the table


@dataclasses.dataclass
class Spec:
    name: str
    make: object  # () -> (module, input names)
    inputs: object  # () -> tuple of example tensors
    dims: dict  # input name -> {axis: dim name}
    origin: str
    ways: tuple = ("dynamo", "dynamo-opt", "ts-functions")  # WAYS it is exported
    positional: bool = False  # make() gives a module taking positional inputs (no keywords)


def ids(*shape):
    return torch.randint(0, 128, shape)


def mask(b, s):
    m = torch.ones(b, s, dtype=torch.int64)
    m[0, -2:] = 0  # a padded row, so the mask matters
    return m


BS = {0: "batch", 1: "seq"}
SPECS = [
    Spec("gpt2", gpt2, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("bert", bert, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ), torch.zeros(BATCH, SEQ, dtype=torch.int64)),
         {"input_ids": BS, "attention_mask": BS, "token_type_ids": BS}, "transformers"),
    Spec("llama", llama, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("t5", t5, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ), ids(BATCH, 5)),
         {"input_ids": BS, "attention_mask": BS, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}, "transformers"),
    Spec("bart", bart, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ), ids(BATCH, 5)),
         {"input_ids": BS, "attention_mask": BS, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}, "transformers"),
    Spec("vit", vit, lambda: (torch.randn(BATCH, 3, 32, 32),), {"pixel_values": {0: "batch"}}, "transformers"),
    Spec("whisper", whisper, lambda: (torch.randn(BATCH, 8, 32), ids(BATCH, 5)),
         {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}, "transformers"),
    Spec("wav2vec2", wav2vec2, lambda: (torch.randn(BATCH, 400),), {"input_values": {0: "batch", 1: "samples"}},
         "transformers"),
    Spec("resnet18", resnet18, lambda: (torch.randn(BATCH, 3, 64, 64),),
         {"images": {0: "batch", 2: "height", 3: "width"}}, "torchvision"),
    Spec("mobilenet_v3", mobilenet_v3, lambda: (torch.randn(BATCH, 3, 64, 64),),
         {"images": {0: "batch", 2: "height", 3: "width"}}, "torchvision"),
    Spec("conv", lambda: (ConvNet(), ("x",)), lambda: (torch.randn(BATCH, 3, 32, 32),),
         {"x": {0: "batch", 2: "height", 3: "width"}}, "module"),
    Spec("bilstm", lambda: (BiLSTM(), ("x",)), lambda: (torch.randn(BATCH, SEQ, 4),), {"x": BS}, "module"),
    Spec("masked_attention", lambda: (MaskedAttention(), ("x", "mask")),
         lambda: (torch.randn(BATCH, SEQ, 16), mask(BATCH, SEQ)), {"x": BS, "mask": BS}, "module"),
    Spec("chunk_split", lambda: (ChunkSplit(), ("x",)), lambda: (torch.randn(BATCH, SEQ, 6),), {"x": BS}, "module"),
    Spec("gather_scatter", lambda: (GatherScatter(), ("x", "idx")),
         lambda: (torch.randn(BATCH, SEQ, 5), torch.randint(0, SEQ, (BATCH, 3, 5))),
         {"x": BS, "idx": {0: "batch", 1: "k"}}, "module"),
    # TorchScript's declarations are what it is here for (issue 44).
    Spec("two_blocks", lambda: (TwoBlocks(), ("x",)), lambda: (torch.randn(BATCH, 3, 16, 16),),
         {"x": {0: "batch", 2: "height", 3: "width"}}, "module", ways=("ts-functions",)),
    # Added together (issue 50): MoE, KV-cache decode, a second seq2seq, NMS and RoIAlign,
    # channel shuffle, splits of expression dims, GRU, and more decoder-only families.
    Spec("mixtral", mixtral, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("qwen2_kv", qwen2_kv,
         lambda: (ids(BATCH, 1),) + tuple(torch.randn(BATCH, 2, SEQ, 8) for _ in range(2 * KV_LAYERS)),
         {"input_ids": {0: "batch"},
          **{f"past_{kv}.{i}": {0: "batch", 2: "past"} for i in range(KV_LAYERS) for kv in ("key", "value")}},
         "transformers", positional=True),
    Spec("marian", marian, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ), ids(BATCH, 5)),
         {"input_ids": BS, "attention_mask": BS, "decoder_input_ids": {0: "batch", 1: "dec_seq"}}, "transformers"),
    Spec("gpt_neox", gpt_neox, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("gemma2", gemma2, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("shufflenet_v2", shufflenet_v2, lambda: (torch.randn(BATCH, 3, 64, 64),),
         {"images": {0: "batch", 2: "height", 3: "width"}}, "torchvision"),
    Spec("lraspp", lraspp, lambda: (torch.randn(BATCH, 3, 64, 64),),
         {"images": {0: "batch", 2: "height", 3: "width"}}, "torchvision"),
    Spec("detector", lambda: (Detector(), ("images",)), lambda: (torch.randn(BATCH, 3, 32, 32),),
         {"images": {0: "batch", 2: "height", 3: "width"}}, "module"),
    Spec("pair_split", lambda: (PairSplit(), ("x",)), lambda: (torch.randn(4, 3, 20, 12),),
         {"x": {0: "batch", 2: "height", 3: "width"}}, "module"),
    Spec("conv_gru", lambda: (ConvGRU(), ("x",)), lambda: (torch.randn(BATCH, SEQ, 4),), {"x": BS}, "module"),
    # Added for issue 52: the kinds OnnxSlim left leaner (DeBERTa-v2 and ALBERT optimized
    # by torch, torch.cond with constants in its branches; TorchScript cannot trace cond).
    Spec("deberta_v2", deberta_v2, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)),
         {"input_ids": BS, "attention_mask": BS}, "transformers"),
    Spec("albert", albert, lambda: (ids(BATCH, SEQ), mask(BATCH, SEQ)), {"input_ids": BS, "attention_mask": BS},
         "transformers"),
    Spec("wav2vec2_conformer", wav2vec2_conformer, lambda: (torch.randn(BATCH, 400),),
         {"input_values": {0: "batch", 1: "samples"}}, "transformers"),
    Spec("cond_branches", lambda: (CondBranches(), ("x",)), lambda: (torch.randn(BATCH, 8),), {"x": {0: "batch"}},
         "module", ways=("dynamo", "dynamo-opt")),
    # Added for issue 52: dims built from shapes (seq+1, 2*seq*batch, seq again).
    Spec("shape_arith", lambda: (ShapeArith(), ("x",)), lambda: (torch.randn(BATCH, SEQ, 4),), {"x": BS},
         "module"),
]


class Positional(nn.Module):
    """Calls the model with its inputs by keyword, from positional arguments, and returns a
    tuple of tensors (TorchScript's export_modules_as_functions and both exporters want
    positional inputs and plain outputs)."""

    def __init__(self, model, names, hf):
        super().__init__()
        self.model = model
        self.names = names
        self.hf = hf

    def forward(self, *args):
        kwargs = dict(zip(self.names, args))
        if self.hf:
            out = self.model(**kwargs, **_hf_kwargs())
        else:
            out = self.model(*args)
        if isinstance(out, torch.Tensor):
            return (out,)
        if isinstance(out, dict):  # torchvision's segmentation models: {"out": ...}
            out = tuple(out.values())
        return tuple(o for o in out if isinstance(o, torch.Tensor))


def fresh(spec):
    """The same model (same random weights) at every call: each export attempt gets its own
    instance, since TorchScript's export_modules_as_functions alters the one it exports."""
    torch.manual_seed(SEED)
    model, names = spec.make()
    model.eval()
    torch.manual_seed(SEED + 1)
    example = spec.inputs()
    return Positional(model, names, spec.origin == "transformers" and not spec.positional), names, example


def output_names(spec):
    with torch.no_grad():
        wrapper, _, example = fresh(spec)
        n = len(wrapper(*example))
    return [f"out{i}" for i in range(n)]


def export_dynamo(spec, path, optimize, opset_version=None):
    from torch.export import Dim

    wrapper, names, example = fresh(spec)
    dim_objects = {}
    shapes = []
    for name in names:
        axes = spec.dims.get(name, {})
        shapes.append({a: dim_objects.setdefault(d, Dim(d)) for a, d in axes.items()} or None)
    opset = {"opset_version": opset_version} if opset_version else {}  # else torch's default
    torch.onnx.export(wrapper, example, path, dynamo=True, optimize=optimize, external_data=False,
                      input_names=list(names), output_names=output_names(spec),
                      dynamic_shapes=(tuple(shapes),), **opset)
    strip_node_metadata(path)
    return {"exporter": "dynamo", "optimize": optimize, "external_data": False,
            "node_metadata_props": "dropped", **opset}


def strip_node_metadata(path):
    """Drops the nodes' metadata_props (torch's stack traces, FX nodes, module scopes):
    two thirds of a small dynamo export, and no part of what it computes."""
    import onnx

    model = onnx.load(path)
    nodes = list(model.graph.node)
    for f in model.functions:
        nodes.extend(f.node)
    while nodes:  # subgraphs too
        node = nodes.pop()
        del node.metadata_props[:]
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                nodes.extend(g.node)
    onnx.save(model, path)


def _plain(v):
    if isinstance(v, (bool, int, float, str)):
        return True
    return isinstance(v, (list, tuple)) and all(isinstance(e, (bool, int, float, str)) for e in v)


def _function_attributes(get, model):
    """TorchScript's export_modules_as_functions tracks each module's class-annotated
    attributes and hands them to C++ as IValues, and wants every instance of a class to
    have the same set. transformers' PreTrainedModel annotates sets, dicts, classes and
    the config (TypeError: _jit_pass_onnx_track_scope_attributes(): incompatible function
    arguments); torchvision's Conv2d has `bias` a Tensor in some instances and None in
    others, and BERT's Embedding a `padding_idx` in one of three ("Found outstanding
    annotated attribute ... Please ensure module instances of the same class have the
    same set of annotated attributes"). Kept: the attributes an ONNX function attribute
    can hold (numbers, strings, lists of them) that every instance of the class has."""
    common = {}
    for m in model.modules():
        keys = {k for k, v in get(m).items() if _plain(v)}
        common[type(m)] = common.get(type(m), keys) & keys

    def attributes(module):
        keep = common.get(type(module), set())
        return {k: v for k, v in get(module).items() if k in keep}

    return attributes


def export_torchscript(spec, path):
    from torch.onnx._internal.torchscript_exporter import utils as ts_utils

    wrapper, names, example = fresh(spec)
    original = ts_utils._get_module_attributes
    ts_utils._get_module_attributes = _function_attributes(original, wrapper)
    try:
        _export_torchscript(wrapper, names, example, spec, path)
    finally:
        ts_utils._get_module_attributes = original
    return {"exporter": "torchscript", "export_modules_as_functions": True, "opset_version": 18,
            "dynamic_axes": "inputs only",
            "module_attributes": "numbers, strings and their lists that every instance of the class has"}


def _export_torchscript(wrapper, names, example, spec, path):
    outs = output_names(spec)
    torch.onnx.export(wrapper, example, path, dynamo=False, export_modules_as_functions=True, opset_version=18,
                      input_names=list(names), output_names=outs,
                      dynamic_axes={n: dict(spec.dims[n]) for n in names if n in spec.dims})


WAYS = {
    "dynamo": lambda spec, path: export_dynamo(spec, path, optimize=False),
    "dynamo-opt": lambda spec, path: export_dynamo(spec, path, optimize=True),
    "ts-functions": export_torchscript,
}


def versions():
    import onnx
    import onnx_ir
    import onnxscript
    import importlib.metadata as md

    v = {"torch": torch.__version__, "onnx": onnx.__version__, "onnxscript": md.version("onnxscript"),
         "onnx_ir": onnx_ir.__version__, "python": sys.version.split()[0]}
    for pkg in ("transformers", "torchvision"):
        v[pkg] = __import__(pkg).__version__
    for key, env in (("onnxscript_commit", "ONNXSCRIPT_COMMIT"), ("onnx_ir_commit", "ONNX_IR_COMMIT")):
        if os.environ.get(env):
            v[key] = os.environ[env]
    import subprocess

    debs = ["python3-torch", "python3-transformers", "python3-torchvision", "python3-onnx", "python3-onnxruntime"]
    listed = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *debs], capture_output=True, text=True)
    v["debian"] = dict(line.split(" ", 1) for line in listed.stdout.splitlines() if " " in line)
    return v


def main(argv):
    out = argv[1]
    chosen = set(argv[2:])
    unknown = chosen - {s.name for s in SPECS}
    if unknown:
        sys.exit(f"export_models: unknown models {sorted(unknown)}")
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    origin_path = os.path.join(out, "origin.json")
    origin = {"versions": versions(), "files": {}, "failed": {}}
    if chosen and os.path.exists(origin_path):
        with open(origin_path) as f:
            old = json.load(f)
        origin["files"] = old.get("files", {})
        origin["failed"] = old.get("failed", {})
    for spec in SPECS:
        if chosen and spec.name not in chosen:
            continue
        for way, export in WAYS.items():
            if way not in spec.ways:
                continue
            file = f"{spec.name}.{way}.onnx"
            path = os.path.join(out, file)
            tmp = path + ".tmp"
            origin["files"].pop(file, None)
            origin["failed"].pop(file, None)
            log = io.StringIO()
            try:
                with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                    options = export(spec, tmp)
                os.replace(tmp, path)
                dims = {n: {str(a): d for a, d in axes.items()} for n, axes in spec.dims.items()}
                origin["files"][file] = {"model": spec.name, "origin": spec.origin, **options, "dynamic_dims": dims}
                print(f"exported {file} ({os.path.getsize(path)} bytes)", flush=True)
            except Exception as e:  # noqa: BLE001 - every failure is recorded, the rest goes on
                for p in (tmp, path):
                    if os.path.exists(p):
                        os.remove(p)
                first = next((l for l in str(e).splitlines() if l.strip()), type(e).__name__)
                first = re.sub(r" at 0x[0-9a-f]+>", ">", first)  # object addresses differ per run
                origin["failed"][file] = f"{type(e).__name__}: {first}"[:400]
                print(f"FAILED {file}: {origin['failed'][file]}", flush=True)
                if os.environ.get("EXPORT_LOGS"):  # the whole story, for whoever debugs it
                    with open(os.path.join(os.environ["EXPORT_LOGS"], file + ".log"), "w") as f:
                        f.write(log.getvalue())
                        traceback.print_exc(file=f)
    with open(origin_path + ".tmp", "w") as f:
        json.dump(origin, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(origin_path + ".tmp", origin_path)


if __name__ == "__main__":
    main(sys.argv)
