"""The XLM-RoBERTa/BERT encoder of multilingual-e5-small as an ONNX graph, from its weights.

Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, seq]``, padding on the
right); output ``pooled`` (float32, ``[batch, hidden]``), the attention-masked mean of
the last hidden states (not yet normalised)::

    x   = LN(word[id] + pos[t] + type[0])                 positions t = 0 .. seq-1
    per layer:
        q, k, v = x Wq / sqrt(d_head), x Wk, x Wv          (one fused [H, 3H] matmul)
        a   = softmax(q k^T + (mask - 1) * 1e9) v           per head
        x   = LN(x + a Wo)
        x   = LN(x + gelu(x Wi) Wf)                         gelu(z) = z/2 (1 + erf(z/sqrt 2))
    pooled = sum_t mask_t x_t / sum_t mask_t

The word table stays 4-bit inside the graph (packed nibbles plus fp16 block scales,
unpacked after the gather), so the file is about a third of a float32 export; every
other weight is the exact float32 dequantisation of the 4-bit tensor.
"""
from __future__ import annotations

import numpy as np

from chaja.encoders.e5_weights import QK, E5Weights

OPSET = 18


def build_e5_graph(weights: E5Weights):
    """An ``onnx.ModelProto`` computing ``pooled`` (see the module docstring)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    d = weights.dims
    hd = d.hidden // d.heads
    nodes: list = []
    inits: list = []

    def const(name: str, value) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731

    # ---- embeddings ------------------------------------------------------
    word = weights.tensors["emb.word"]
    nb = d.hidden // QK
    const("word.nibbles", np.asarray(word.nibbles))              # uint8 [V, nb, 16]
    const("word.scales", np.asarray(word.scales))                # float16 [V, nb]
    g = node("Gather", ["word.nibbles", "input_ids"], "emb.packed")
    lo = node("BitwiseAnd", [g, const("c.15", np.array(15, np.uint8))], "emb.lo")
    hi = node("BitShift", [g, const("c.4u8", np.array(4, np.uint8))], "emb.hi", direction="RIGHT")
    q = node("Concat", [lo, hi], "emb.q", axis=-1)               # [B, S, nb, 32]
    qf = node("Sub", [node("Cast", [q], "emb.qf", to=TensorProto.FLOAT), const("c.8", f32(8.0))], "emb.qc")
    sc = node("Cast", [node("Gather", ["word.scales", "input_ids"], "emb.sc16")], "emb.sc", to=TensorProto.FLOAT)
    sc = node("Unsqueeze", [sc, const("ax.-1", i64(-1))], "emb.sc1")
    w = node("Reshape", [node("Mul", [qf, sc], "emb.wq"), const("shape.bsh", i64(0, 0, d.hidden))], "emb.word")
    pos_type = (weights.dense("emb.pos") + weights.dense("emb.type")[0]).astype(np.float32)
    const("emb.pos_type", pos_type)                              # [MAXP, H]
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    pt = node("Slice", ["emb.pos_type", const("i.0", i64(0)), seq, const("ax.0", i64(0))], "emb.pt")
    x = node("Add", [w, pt], "emb.sum")
    x = node(
        "LayerNormalization", [x, const("emb.ln.w", weights.dense("emb.ln.w")),
                               const("emb.ln.b", weights.dense("emb.ln.b"))],
        "emb.ln", axis=-1, epsilon=d.eps,
    )

    # ---- attention mask: 0 for tokens, -1e9 for padding ---------------------
    maskf = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [maskf, const("c.1", f32(1.0))], "mask.m1"), const("c.1e9", f32(1e9))], "mask.bias")
    bias = node("Unsqueeze", [bias, const("ax.1.2", i64(1, 2))], "mask.bias4")     # [B, 1, 1, S]

    heads_shape = const("shape.heads", i64(0, 0, d.heads, hd))
    scale = np.float32(1.0 / np.sqrt(hd))   # 1/8: folding it into Wq, bq is exact

    # ---- layers ----------------------------------------------------------
    for li in range(d.layers):
        p = f"l{li}."
        wqkv = np.concatenate(
            [weights.dense(p + "q.w") * scale, weights.dense(p + "k.w"), weights.dense(p + "v.w")], axis=0
        ).T                                                      # [H, 3H]
        bqkv = np.concatenate([weights.dense(p + "q.b") * scale, weights.dense(p + "k.b"), weights.dense(p + "v.b")])
        qkv = node("MatMul", [x, const(p + "qkv.w", wqkv.astype(np.float32))], p + "qkv.mm")
        qkv = node("Add", [qkv, const(p + "qkv.b", bqkv.astype(np.float32))], p + "qkv")
        split = helper.make_node("Split", [qkv, const(p + "split", i64(d.hidden, d.hidden, d.hidden))],
                                 [p + "q", p + "k", p + "v"], name=p + "split", axis=-1)
        nodes.append(split)
        qh = node("Transpose", [node("Reshape", [p + "q", heads_shape], p + "q4")], p + "qt", perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [p + "k", heads_shape], p + "k4")], p + "kt", perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [p + "v", heads_shape], p + "v4")], p + "vt", perm=[0, 2, 1, 3])
        s = node("Add", [node("MatMul", [qh, kh], p + "scores"), bias], p + "scores.masked")
        a = node("MatMul", [node("Softmax", [s], p + "probs", axis=-1), vh], p + "ctx4")
        a = node("Reshape", [node("Transpose", [a], p + "ctx.t", perm=[0, 2, 1, 3]), const(p + "shape.ctx", i64(0, 0, d.hidden))], p + "ctx")
        a = node("MatMul", [a, const(p + "ao.w", weights.dense(p + "ao.w").T.copy())], p + "ao.mm")
        a = node("Add", [a, const(p + "ao.b", weights.dense(p + "ao.b"))], p + "ao")
        x = node("LayerNormalization", [node("Add", [x, a], p + "res1"), const(p + "aln.w", weights.dense(p + "aln.w")),
                                        const(p + "aln.b", weights.dense(p + "aln.b"))], p + "ln1", axis=-1, epsilon=d.eps)
        h = node("MatMul", [x, const(p + "fi.w", weights.dense(p + "fi.w").T.copy())], p + "fi.mm")
        h = node("Add", [h, const(p + "fi.b", weights.dense(p + "fi.b"))], p + "fi")
        e = node("Erf", [node("Mul", [h, const(p + "c.rsqrt2", f32(1.0 / np.sqrt(2.0)))], p + "gelu.s")], p + "gelu.erf")
        e = node("Mul", [node("Add", [e, const(p + "c.one", f32(1.0))], p + "gelu.1p"), const(p + "c.half", f32(0.5))], p + "gelu.h")
        h = node("Mul", [h, e], p + "gelu")
        h = node("MatMul", [h, const(p + "fo.w", weights.dense(p + "fo.w").T.copy())], p + "fo.mm")
        h = node("Add", [h, const(p + "fo.b", weights.dense(p + "fo.b"))], p + "fo")
        x = node("LayerNormalization", [node("Add", [x, h], p + "res2"), const(p + "oln.w", weights.dense(p + "oln.w")),
                                        const(p + "oln.b", weights.dense(p + "oln.b"))], p + "ln2", axis=-1, epsilon=d.eps)

    # ---- masked mean pooling ------------------------------------------------
    m3 = node("Unsqueeze", [maskf, const("ax.-1b", i64(-1))], "pool.mask")
    num = node("ReduceSum", [node("Mul", [x, m3], "pool.masked"), const("ax.1", i64(1))], "pool.sum", keepdims=0)
    den = node("ReduceSum", [m3, const("ax.1b", i64(1))], "pool.count", keepdims=0)
    node("Div", [num, den], "pooled")

    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", d.hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="chaja")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def weight_matmuls(model) -> list[str]:
    """Names of the MatMul nodes whose second input is a weight (what int8 quantises)."""
    inits = {t.name for t in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in inits]
