#!/usr/bin/env python3
"""Record the aten calls of real model architectures in BackendBench's trace format.

Models are built from their configuration (architecture) code only: no weights are downloaded,
parameters keep their random initialisation, which does not change which aten overloads run or
their shapes. Each model is run under a TorchDispatchMode that counts every aten overload call
with its argument spec (shapes, dtypes, non-contiguous strides, other arguments); the result is
written as one trace file per model, dtype and mode:

    OUT/<source>-<model>-<dtype>-<mode>.txt     e.g. torchvision-resnet50-f32-infer.txt

Sources, each used when its package is importable:
  torchvision   classification (resnet, mobilenet, vit_b_16, convnext, efficientnet, ...), segmentation,
                detection (inference only), video and optical flow (get_model(weights=None,
                weights_backbone=None))
  torchnn       a BERT-base-sized nn.TransformerEncoder and an LSTM language model from torch.nn
  transformers  Llama, Mistral, GPT-2, BERT, T5, ViT from their Config classes (real widths,
                fewer layers: --hf-layers)
  timm          timm.create_model(name, pretrained=False)

Modes: 'infer' (eval mode, no_grad forward) and 'train' (train mode, forward, backward of a
cross-entropy loss against random labels (a sum for other outputs) and one AdamW step, so the
backward and optimizer overloads are recorded too). Dtypes: f32, and bf16/f16 where the device
runs the model in them (a variant that raises is skipped and reported).

One command records everything available into a directory:

    python3 tools/record_traces.py --out harness/data/traces            # CPU, what is installed
    python3 tools/record_traces.py --out traces-gpu --device cuda       # on the GPU machine

Runs on PyTorch 1.13 (Debian) and 2.x.
"""
import argparse
import collections
import contextlib
import io
import math
import os
import sys
import time
import traceback
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode

SHORT = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.complex64: "c64", torch.complex128: "c128", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8", torch.bool: "b8",
}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class Unsupported(Exception):
    pass


def overload_name(func):
    ns, name = func._schema.name.split("::", 1)
    return "%s.%s.%s" % (ns, name, func._schema.overload_name or "default")


def fmt(v):
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided or v.dtype not in SHORT:
            raise Unsupported("tensor %s %s" % (v.layout, v.dtype))
        s = "T(%s, %s" % (list(v.shape), SHORT[v.dtype])
        if not v.is_contiguous() and v.numel() > 1:
            s += ", %s" % list(v.stride())
        return s + ")"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if v is None:
        return "None"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, torch.device):
        # The trace names no device: kernelgate draws tensors on the device it evaluates on.
        return "torch.device('%s')" % v.type
    if isinstance(v, (torch.memory_format, torch.layout)):
        return str(v)
    if isinstance(v, (list, tuple)):
        items = [fmt(x) for x in v]
        if isinstance(v, list) or isinstance(v, torch.Size):
            return "[" + ", ".join(items) + "]"
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if type(v).__name__ == "SymInt":
        return str(int(v))
    if type(v).__name__ == "SymFloat":
        return fmt(float(v))
    raise Unsupported(type(v).__name__)


def fmt_spec(args, kwargs):
    a = [fmt(x) for x in args]
    args_s = "(" + a[0] + ",)" if len(a) == 1 else "(" + ", ".join(a) + ")"
    return "(%s, {%s})" % (args_s, ", ".join("%r: %s" % (k, fmt(v)) for k, v in kwargs.items()))


class Counter(TorchDispatchMode):
    """Counts aten overload calls by argument spec (taken before the call runs)."""

    def __init__(self):
        super().__init__()
        self.ops = collections.OrderedDict()  # overload -> Counter(spec)
        self.unsupported = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = overload_name(func)
        try:
            spec = fmt_spec(args, kwargs)
            self.ops.setdefault(name, collections.Counter())[spec] += 1
        except Unsupported:
            self.unsupported[name] += 1
        return func(*args, **kwargs)


# ---- model catalogue -----------------------------------------------------------------------------
# (name, builder, example-input builder); builders import lazily so a missing package only
# removes its own models.

def torchvision_models(batch):
    import torchvision
    names = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "vit_b_16", "convnext_tiny",
             "efficientnet_b0", "densenet121", "regnet_y_400mf", "shufflenet_v2_x1_0", "squeezenet1_1",
             "swin_t", "googlenet", "inception_v3", "mnasnet1_0"]
    out = []

    def get(n, **kw):
        if hasattr(torchvision.models, "get_model"):
            return torchvision.models.get_model(n, weights=None, **kw)
        return getattr(torchvision.models, n)(pretrained=False, **kw)
    for n in names:
        def build(n=n):
            kw = {"aux_logits": False, "init_weights": True} if n in ("googlenet", "inception_v3") else {}
            return get(n, **kw)
        side = 299 if n == "inception_v3" else 224
        out.append(("torchvision", n, build, lambda dev, dt, side=side: (torch.randn(batch, 3, side, side, device=dev, dtype=dt),)))
    # Dense prediction, detection (inference only: training needs targets), video and optical flow.
    # weights_backbone=None: their default backbone weights would be downloaded.
    small = max(1, batch // 4)
    for n in ["deeplabv3_mobilenet_v3_large", "fcn_resnet50", "lraspp_mobilenet_v3_large"]:
        out.append(("torchvision", n, lambda n=n: get(n, weights_backbone=None, aux_loss=False) if n != "lraspp_mobilenet_v3_large"
                    else get(n, weights_backbone=None),
                    lambda dev, dt: (torch.randn(small, 3, 320, 320, device=dev, dtype=dt),)))
    for n in ["fasterrcnn_mobilenet_v3_large_fpn", "retinanet_resnet50_fpn", "ssdlite320_mobilenet_v3_large", "maskrcnn_resnet50_fpn"]:
        out.append(("torchvision", n, lambda n=n: get(n, weights_backbone=None),
                    lambda dev, dt: ([torch.rand(3, 480, 640, device=dev, dtype=dt) for _ in range(small)],), "infer-only"))
    for n, side in [("r3d_18", 112), ("s3d", 224)]:
        out.append(("torchvision", n, lambda n=n: get(n),
                    lambda dev, dt, side=side: (torch.randn(small, 3, 16, side, side, device=dev, dtype=dt),)))
    out.append(("torchvision", "raft_small", lambda: get("raft_small"),
                lambda dev, dt: (torch.randn(small, 3, 224, 224, device=dev, dtype=dt), torch.randn(small, 3, 224, 224, device=dev, dtype=dt)),
                "infer-only"))
    return out, "torchvision " + torchvision.__version__


def torch_nn_models(batch, seq):
    """Architectures built from torch.nn alone: a BERT-base-sized encoder and an LSTM language model."""
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(30522, 768)
            self.pos = nn.Embedding(512, 768)
            self.norm = nn.LayerNorm(768)
            layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.1, activation="gelu", batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(768, 30522)

        def forward(self, ids, mask):
            pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
            x = self.norm(self.emb(ids) + self.pos(pos))
            return self.head(self.enc(x, src_key_padding_mask=mask))

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10000, 512)
            self.rnn = nn.LSTM(512, 512, num_layers=2, batch_first=True)
            self.head = nn.Linear(512, 10000)

        def forward(self, ids):
            return self.head(self.rnn(self.emb(ids))[0])
    s = min(seq, 128)

    def enc_inputs(dev, dt):
        mask = torch.zeros(batch, s, dtype=torch.bool, device=dev)
        mask[:, s - s // 4:] = True
        return (torch.randint(0, 30522, (batch, s), device=dev), mask)
    return [("torchnn", "transformer_encoder", Encoder, enc_inputs),
            ("torchnn", "lstm_lm", LSTMLM, lambda dev, dt: (torch.randint(0, 10000, (batch, 64), device=dev),))], "torch.nn"


def transformers_models(batch, seq, layers):
    import transformers as tf
    # Real widths of public checkpoints' configurations; only the layer count is reduced.
    cfgs = [
        ("llama", lambda: tf.LlamaConfig(hidden_size=4096, intermediate_size=11008, num_attention_heads=32,
                                         num_key_value_heads=32, vocab_size=32000, num_hidden_layers=layers), tf.LlamaForCausalLM, "tokens"),
        ("mistral", lambda: tf.MistralConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                                             num_key_value_heads=8, vocab_size=32000, num_hidden_layers=layers), tf.MistralForCausalLM, "tokens"),
        ("gpt2", lambda: tf.GPT2Config(n_embd=768, n_head=12, n_layer=layers, vocab_size=50257), tf.GPT2LMHeadModel, "tokens"),
        ("bert", lambda: tf.BertConfig(hidden_size=768, num_attention_heads=12, intermediate_size=3072,
                                       num_hidden_layers=layers, vocab_size=30522), tf.BertForMaskedLM, "tokens"),
        ("t5", lambda: tf.T5Config(d_model=512, d_ff=2048, num_heads=8, num_layers=layers, num_decoder_layers=layers,
                                   vocab_size=32128), tf.T5ForConditionalGeneration, "seq2seq"),
        ("vit", lambda: tf.ViTConfig(hidden_size=768, num_attention_heads=12, intermediate_size=3072,
                                     num_hidden_layers=layers, image_size=224, patch_size=16), tf.ViTForImageClassification, "pixels"),
    ]
    out = []
    for name, cfg, cls, kind in cfgs:
        def build(cfg=cfg, cls=cls):
            c = cfg()
            if hasattr(c, "_attn_implementation"):
                c._attn_implementation = "eager" if os.environ.get("KG_HF_EAGER_ATTN") else getattr(c, "_attn_implementation", None) or "sdpa"
            return cls(c)

        def inputs(dev, dt, kind=kind, vocab=cfg().vocab_size if kind != "pixels" else 0):
            if kind == "pixels":
                return {"pixel_values": torch.randn(batch, 3, 224, 224, device=dev, dtype=dt)}
            ids = torch.randint(0, vocab, (batch, seq), device=dev)
            if kind == "seq2seq":
                return {"input_ids": ids, "decoder_input_ids": torch.randint(0, vocab, (batch, seq // 2), device=dev)}
            return {"input_ids": ids}
        out.append(("hf", name, build, inputs))
    return out, "transformers " + tf.__version__


def timm_models(batch):
    import timm
    names = ["resnet50", "efficientnet_b0", "vit_base_patch16_224", "convnext_tiny", "deit_small_patch16_224",
             "mobilenetv3_large_100", "regnety_016", "swin_tiny_patch4_window7_224", "resnext50_32x4d", "densenet121"]
    out = []
    for n in names:
        out.append(("timm", n, lambda n=n: timm.create_model(n, pretrained=False),
                    lambda dev, dt: (torch.randn(batch, 3, 224, 224, device=dev, dtype=dt),)))
    return out, "timm " + timm.__version__


def loss_of(out):
    if isinstance(out, torch.Tensor):
        if out.dim() == 2:  # class logits: cross entropy against random labels
            target = torch.randint(0, out.shape[1], (out.shape[0],), device=out.device)
            return torch.nn.functional.cross_entropy(out.float(), target)
        if out.dim() == 3 and out.dtype.is_floating_point:  # token logits
            target = torch.randint(0, out.shape[-1], out.shape[:2], device=out.device)
            return torch.nn.functional.cross_entropy(out.float().flatten(0, 1), target.flatten())
        return out.float().sum()
    if hasattr(out, "logits"):
        return out.logits.float().sum()
    if isinstance(out, (tuple, list)):
        return loss_of(out[0])
    if isinstance(out, dict):
        return loss_of(out["out"] if "out" in out else next(iter(out.values())))
    raise TypeError("no tensor output")


def record(build, make_inputs, device, dtype, mode):
    torch.manual_seed(0)
    model = build().to(device=device, dtype=dtype)
    inputs = make_inputs(device, dtype)
    counter = Counter()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if mode == "infer":
            model.eval()
            with torch.no_grad(), counter:
                model(**inputs) if isinstance(inputs, dict) else model(*inputs)
        else:
            model.train()
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
            with counter:
                out = model(**inputs) if isinstance(inputs, dict) else model(*inputs)
                loss_of(out).backward()
                opt.step()
                opt.zero_grad()
    return counter


def write_trace(path, counter, header):
    with open(path, "w") as f:
        for line in header:
            f.write("# %s\n" % line)
        for name in sorted(counter.ops):
            f.write("Operator: %s\n" % name)
            for spec, cnt in counter.ops[name].most_common():
                f.write("cnt: %d, %s\n" % (cnt, spec))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="directory for the trace files")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtypes", default="f32,bf16", help="comma-separated among f32, bf16, f16 (default: %(default)s)")
    p.add_argument("--modes", default="infer,train", help="comma-separated among infer, train (default: %(default)s)")
    p.add_argument("--sources", default="torchvision,torchnn,transformers,timm")
    p.add_argument("--models", default="", help="comma-separated model names (default: every one)")
    p.add_argument("--batch", type=int, default=8, help="images per batch / sequences per batch (default: %(default)s)")
    p.add_argument("--seq", type=int, default=512, help="tokens per sequence for text models (default: %(default)s)")
    p.add_argument("--hf-layers", type=int, default=2, help="transformer layers built per model (default: %(default)s)")
    p.add_argument("--train-dtypes", default="f32", help="dtypes recorded in train mode (default: %(default)s)")
    a = p.parse_args()

    os.makedirs(a.out, exist_ok=True)
    catalogue, versions = [], ["torch " + torch.__version__]
    for src in a.sources.split(","):
        try:
            if src == "torchvision":
                models, ver = torchvision_models(a.batch)
            elif src == "transformers":
                models, ver = transformers_models(a.batch, a.seq, a.hf_layers)
            elif src == "torchnn":
                models, ver = torch_nn_models(a.batch, a.seq)
            elif src == "timm":
                models, ver = timm_models(a.batch)
            else:
                print("unknown source %s" % src, file=sys.stderr)
                continue
        except Exception as e:  # not installed, or a version whose API differs: skip the source
            print("skipping %s: %s: %s" % (src, type(e).__name__, e), file=sys.stderr)
            continue
        catalogue += models
        versions.append(ver)
    only = set(x for x in a.models.split(",") if x)
    failures = []
    for entry in catalogue:
        src, name, build, make_inputs = entry[:4]
        infer_only = len(entry) > 4 and entry[4] == "infer-only"
        if only and name not in only:
            continue
        for mode in a.modes.split(","):
            if infer_only and mode == "train":
                continue
            dts = a.dtypes.split(",") if mode == "infer" else [d for d in a.train_dtypes.split(",") if d in a.dtypes.split(",")]
            for dt in dts:
                t0 = time.time()
                try:
                    counter = record(build, make_inputs, a.device, DTYPES[dt], mode)
                except Exception as e:
                    failures.append("%s-%s-%s-%s: %s" % (src, name, dt, mode, str(e).splitlines()[0] if str(e) else type(e).__name__))
                    print("FAILED %s" % failures[-1], file=sys.stderr)
                    if os.environ.get("KG_TRACE_DEBUG"):
                        traceback.print_exc()
                    continue
                fname = "%s-%s-%s-%s.txt" % (src, name, dt, mode)
                header = ["Recorded by tools/record_traces.py: %s %s, %s, %s mode, batch %d%s, device %s." %
                          (src, name, dt, mode, a.batch, (", seq %d, %d layers" % (a.seq, a.hf_layers)) if src == "hf" else "", a.device),
                          "Versions: " + ", ".join(versions) + ". Random initialisation, no weights downloaded."]
                if counter.unsupported:
                    header.append("Calls with arguments the format cannot carry (left out): " +
                                  ", ".join("%s x%d" % kv for kv in sorted(counter.unsupported.items())))
                write_trace(os.path.join(a.out, fname), counter, header)
                print("%-48s %4d overloads %6d calls %.1fs" % (fname, len(counter.ops), sum(sum(c.values()) for c in counter.ops.values()),
                                                             time.time() - t0), file=sys.stderr)
    if failures:
        print("\n%d variants failed:\n  %s" % (len(failures), "\n  ".join(failures)), file=sys.stderr)


if __name__ == "__main__":
    main()
