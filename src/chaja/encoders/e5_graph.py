"""The XLM-RoBERTa/BERT encoder of multilingual-e5-small as an ONNX graph, from its weights.

Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``, padding on the
right); output ``pooled`` (float32, ``[batch, hidden]``), the attention-masked mean of
the last hidden states (not yet normalised)::

    x   = LN(word[id] + pos[t] + type[0])                 positions t = 0 .. seq-1
    per layer:
        q, k, v = x Wq + bq, x Wk + bk, x Wv + bv          (one fused [H, 3H] product)
        a   = softmax(q k^T / sqrt(d_head) + mask) v        per head; mask = -1e4 on padding
        x   = LN(x + a Wo + bo)
        x   = LN(x + gelu(x Wi + bi) Wf + bf)               gelu(z) = z/2 (1 + erf(z/sqrt 2))
    pooled = sum_t mask_t x_t / sum_t mask_t

Bias+GELU uses onnxruntime's fused ``com.microsoft`` BiasGelu; attention and
residual+LayerNorm stay plain ONNX ops (on this CPU as fast as onnxruntime's fused
MultiHeadAttention, and faster than its SkipLayerNormalization).  Tokens are rows of a
``[batch * seq, hidden]`` matrix outside attention.

The word table stays 4-bit inside the graph (packed nibbles plus fp16 block scales,
unpacked after the gather).  The weight products ``x W`` are either

* ``fp32``: ``W`` is the exact float32 dequantisation of the 4-bit tensor, or
* ``int8``: per token ``s = max_j |x_j| / 127``, ``xq = round(x / s)`` (stored as
  uint8 with zero point 128), ``W ~ Wq * w_scale`` with int8 ``Wq`` per output column,
  and ``x W ~ s * w_scale * (xq Wq)`` with the product in int32.  Each token's
  result depends on that token alone, so a text's vector does not depend on its batch.
"""
from __future__ import annotations

import numpy as np

from chaja.encoders.e5_weights import E5Weights

OPSET = 17
MS = "com.microsoft"
KINDS = ("fp32", "int8")


def build_e5_graph(weights: E5Weights, kind: str = "fp32"):
    """An ``onnx.ModelProto`` computing ``pooled`` (see the module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"unknown graph kind {kind!r}; expected one of {KINDS}")
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    d = weights.dims
    H = d.hidden
    hd = H // d.heads
    nodes: list = []
    inits: list = []

    def const(name: str, value) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, domain: str = "", **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def i64(*v):
        return np.array(v, dtype=np.int64)

    def f32(v):
        return np.array(v, dtype=np.float32)

    # ---- embeddings: unpack the 4-bit word rows after the gather -----------------
    word = weights.tensors["emb.word"]
    const("word.nibbles", np.asarray(word.nibbles))              # uint8 [V, H/32, 16]
    const("word.scales", np.asarray(word.scales))                # float16 [V, H/32]
    ids = node("Reshape", ["input_ids", const("shape.flat", i64(-1))], "ids.flat")
    g = node("Gather", ["word.nibbles", ids], "emb.packed")      # [M, H/32, 16]
    hi = node("BitShift", [g, const("c.4u8", np.array(4, np.uint8))], "emb.hi", direction="RIGHT")
    gf = node("Cast", [g], "emb.packed.f", to=TensorProto.FLOAT)
    hf = node("Cast", [hi], "emb.hi.f", to=TensorProto.FLOAT)
    lo = node("Sub", [gf, node("Mul", [hf, const("c.16", f32(16.0))], "emb.hi16")], "emb.lo.f")
    q = node("Sub", [node("Concat", [lo, hf], "emb.q", axis=-1), const("c.8", f32(8.0))], "emb.qc")
    sc = node("Cast", [node("Gather", ["word.scales", ids], "emb.sc16")], "emb.sc", to=TensorProto.FLOAT)
    sc = node("Unsqueeze", [sc, const("ax.-1", i64(-1))], "emb.sc1")
    w = node("Reshape", [node("Mul", [q, sc], "emb.wq"), const("shape.mh", i64(-1, H))], "emb.word")  # [M, H]

    shape_bs = node("Shape", ["input_ids"], "shape.bs")
    shape_bsh = node("Concat", [shape_bs, const("c.H", i64(H))], "shape.bsh", axis=0)
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    pos_type = (weights.dense("emb.pos") + weights.dense("emb.type")[0]).astype(np.float32)
    pt = node("Slice", [const("emb.pos_type", pos_type), const("i.0", i64(0)), seq, const("ax.0", i64(0))], "emb.pt")
    x3 = node("Add", [node("Reshape", [w, shape_bsh], "emb.word3"), pt], "emb.sum")
    x3 = node("LayerNormalization", [x3, const("emb.ln.w", weights.dense("emb.ln.w")),
                                     const("emb.ln.b", weights.dense("emb.ln.b"))], "emb.ln", axis=-1, epsilon=d.eps)
    x = node("Reshape", [x3, "shape.mh"], "x.0")

    if kind == "int8":
        const("q.127", f32(127.0))
        const("q.tiny", f32(1e-30))
        const("q.one", f32(1.0))
        const("q.zp", np.array(128, np.uint8))

    def linear(inp: str, wmat: np.ndarray, out: str) -> str:
        """``inp [M, K] @ wmat [K, N]`` without bias (consumers add it)."""
        if kind == "fp32":
            return node("MatMul", [inp, const(out + ".w", wmat.astype(np.float32))], out)
        ws = np.abs(wmat).max(axis=0) / 127.0
        ws[ws == 0] = 1.0
        wq = np.clip(np.round(wmat / ws), -127, 127).astype(np.int8)
        amax = node("ReduceMax", [node("Abs", [inp], out + ".abs")], out + ".amax", axes=[1], keepdims=0)
        s = node("Max", [node("Div", [amax, "q.127"], out + ".s0"), "q.tiny"], out + ".s")       # [M]
        zp = node("Expand", ["q.zp", node("Shape", [s], out + ".m")], out + ".zp")
        xq = node("QuantizeLinear", [inp, s, zp], out + ".xq", axis=0)
        y = node("MatMulIntegerToFloat", [xq, const(out + ".wq", wq), "q.one",
                                          const(out + ".ws", ws.astype(np.float32)), "q.zp"], out + ".y", domain=MS)
        return node("Mul", [y, node("Unsqueeze", [s, const(out + ".ax", i64(1))], out + ".s1")], out)

    def add_norm(res: str, y: str, bias: str, ln: str, out: str) -> str:
        """``LN(res + y + bias)``; plain ops: faster here than the fused SkipLayerNormalization."""
        z = node("Add", [node("Add", [y, const(bias, weights.dense(bias))], out + ".yb"), res], out + ".res")
        return node("LayerNormalization", [z, const(ln + ".w", weights.dense(ln + ".w")),
                                           const(ln + ".b", weights.dense(ln + ".b"))], out, axis=-1, epsilon=d.eps)

    # ---- layers ----------------------------------------------------------
    heads_shape = node("Concat", [shape_bs, const("c.heads", i64(d.heads, hd))], "shape.heads", axis=0)
    bias = node("Mul", [node("Sub", [node("Cast", ["attention_mask"], "mask.f0", to=TensorProto.FLOAT),
                                      const("c.1", f32(1.0))], "mask.m1"), const("c.1e4", f32(1e4))], "mask.bias")
    bias = node("Unsqueeze", [bias, const("ax.1.2", i64(1, 2))], "mask.bias4")    # [B, 1, 1, S]: 0 or -1e4
    scale = 1.0 / np.sqrt(hd)               # a power of two (1/8): folding it into Wq, bq is exact
    for li in range(d.layers):
        p = f"l{li}."
        wqkv = np.concatenate([weights.dense(p + "q.w") * scale, weights.dense(p + "k.w"),
                               weights.dense(p + "v.w")], axis=0).T                          # [H, 3H]
        bqkv = np.concatenate([weights.dense(p + "q.b") * scale, weights.dense(p + "k.b"), weights.dense(p + "v.b")])
        qkv = node("Add", [linear(x, wqkv, p + "qkv"), const(p + "qkv.b", bqkv.astype(np.float32))], p + "qkv.out")
        split = helper.make_node("Split", [qkv, const(p + "split", i64(H, H, H))], [p + "q", p + "k", p + "v"],
                                 name=p + "split", axis=-1)
        nodes.append(split)
        qh, kh, vh = (node("Transpose", [node("Reshape", [p + n, heads_shape], p + n + "4")], p + n + "t", perm=perm)
                      for n, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])))
        sc = node("Add", [node("MatMul", [qh, kh], p + "scores"), bias], p + "scores.masked")
        a = node("MatMul", [node("Softmax", [sc], p + "probs", axis=-1), vh], p + "ctx4")
        a = node("Transpose", [a], p + "attn", perm=[0, 2, 1, 3])
        a = linear(node("Reshape", [a, "shape.mh"], p + "attn2"), weights.dense(p + "ao.w").T, p + "ao")
        x = add_norm(x, a, p + "ao.b", p + "aln", p + "ln1")
        h = linear(x, weights.dense(p + "fi.w").T, p + "fi")
        h = node("BiasGelu", [h, const(p + "fi.b", weights.dense(p + "fi.b"))], p + "gelu", domain=MS)
        h = linear(h, weights.dense(p + "fo.w").T, p + "fo")
        x = add_norm(x, h, p + "fo.b", p + "oln", p + "ln2")

    # ---- masked mean pooling ------------------------------------------------
    x3 = node("Reshape", [x, shape_bsh], "last")
    maskf = node("Unsqueeze", [node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT),
                               const("ax.-1b", i64(-1))], "pool.mask")
    num = node("ReduceSum", [node("Mul", [x3, maskf], "pool.masked"), const("ax.1", i64(1))], "pool.sum", keepdims=0)
    den = node("ReduceSum", [maskf, const("ax.1b", i64(1))], "pool.count", keepdims=0)
    node("Div", [num, den], "pooled")

    graph = helper.make_graph(
        nodes,
        f"multilingual-e5-small-{kind}",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", H])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
                              producer_name="chaja")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
