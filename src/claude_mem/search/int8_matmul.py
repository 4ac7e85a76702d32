"""The model's weight products kept int8 in memory and computed in int8: a rewrite of its graph
as it loads.

The pinned model stores each of its 36 weight matrices as int8 with one scale per output
column, dequantized by `MatMul(x, Mul(Cast(q), scale))`. ONNX Runtime folds the constant
`Mul(Cast(q), scale)` when the session opens, so the weights live in memory as float32, four
times their int8 size, and every product is a float32 one. Each such MatMul is rewritten
as ONNX Runtime's `MatMulNBits` with 8 bits: the same int8 numbers (stored as q + 128, zero
point 128, the column's scale repeated over its blocks of `BLOCK` rows), kept int8, and
`accuracy_level` 4, which multiplies them with the activations quantized to int8 per block of
`BLOCK` values within one token's row. So a text's vector does not depend on the batch it is
embedded in, and it stays within a cosine of 0.999 of the float32 products' (checked by
tests/test_search_embed.py; the worker's memory, query, batch and recall figures before and
after in bench/NOTES.md). The vectors are not the same numbers, so the model id names this
rewrite (`embed.model_id`) and vectors made before it are re-embedded once. The edit is made
on the file's bytes (`onnx_wire`); a graph without the pattern is unchanged.
"""

from __future__ import annotations

from claude_mem.search.onnx_wire import (
    FLOAT,
    INT8,
    UINT8,
    Edit,
    Graph,
    Node,
    edit_model,
    encode_node,
    encode_tensor,
    int_attribute,
)

BLOCK = 32  # rows of a weight column (and values of an activation row) quantized together
ACCURACY_LEVEL = 4  # MatMulNBits: int8 compute
_DOMAIN = "com.microsoft"  # ONNX Runtime's own operators


def _products(graph: Graph) -> Edit | None:
    import numpy as np  # noqa: PLC0415 - heavy, only with a model

    edit = Edit(domains={_DOMAIN: 1})
    for i, matmul, mul, cast in graph.fed_dequantized("MatMul", 1):
        weights = graph.initializers.get(cast[1].inputs[0])
        scales = graph.initializers.get(mul[1].inputs[1])
        if weights is None or scales is None:
            continue  # the weights and their scales must be tensors of the file
        (weights_at, q), (scales_at, scale) = weights, scales
        if q.data_type != INT8 or q.raw is None or len(q.dims) != 2:
            continue
        k, n = q.dims
        if (
            scale.data_type != FLOAT
            or scale.raw is None
            or len(scale.raw) != 4 * n
            or len(q.raw) != k * n
            or k % BLOCK
        ):
            continue
        product, widened = matmul.inputs[1], mul[1].inputs[0]
        stored = np.frombuffer(q.raw, dtype=np.uint8).reshape(k, n) ^ 0x80  # q + 128
        by_column = np.ascontiguousarray(stored.T)  # [n, k]: a column's blocks in a row
        repeated = np.repeat(np.frombuffer(scale.raw, dtype="<f4"), k // BLOCK)
        name = f"{product}/nbits"
        edit.added += [
            encode_tensor(f"{name}/q", UINT8, [n, k // BLOCK, BLOCK], by_column.tobytes()),
            encode_tensor(f"{name}/scales", FLOAT, [n * (k // BLOCK)], repeated.tobytes()),
        ]
        attributes = [
            int_attribute("K", k),
            int_attribute("N", n),
            int_attribute("bits", 8),
            int_attribute("block_size", BLOCK),
            int_attribute("accuracy_level", ACCURACY_LEVEL),
        ]
        edit.replaced[i] = encode_node(
            Node(
                "MatMulNBits",
                [matmul.inputs[0], f"{name}/q", f"{name}/scales"],
                matmul.outputs,
                attributes,
                _DOMAIN,
            )
        )
        edit.dropped |= {mul[0], cast[0]}
        edit.dropped |= {
            at
            for at, value in ((weights_at, cast[1].inputs[0]), (scales_at, mul[1].inputs[1]))
            if graph.uses[value] == 1
        }
        edit.gone |= {product, widened}
    return edit if edit.replaced else None


def int8_products(model: bytes) -> bytes:
    """`model` (a serialized ONNX ModelProto) with its dequantized weight products rewritten as
    8-bit `MatMulNBits` (module docstring); the same bytes when it has none."""
    return edit_model(model, _products)
