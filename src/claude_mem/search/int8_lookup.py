"""The model's lookup tables kept int8 in memory: a rewrite of its graph as it loads.

The pinned model stores each embedding table as int8 rows and a per-row scale, dequantized by
`Gather(Mul(Cast(rows), scale), ids)`. ONNX Runtime folds that constant `Mul(Cast(...))` when
the session opens, so the word table (30,522 × 384) lives in memory as float32, four times its
int8 size (bench/NOTES.md). Rewritten as `Mul(Cast(Gather(rows, ids)), Gather(scale, ids))`,
the tables stay int8 and only the rows a text uses are dequantized, by the same operations on
the same numbers: the output is unchanged (tests/test_search_embed.py compares it bit for bit).
The edit is made on the file's bytes (`onnx_wire`); a graph without the pattern is unchanged.
"""

from __future__ import annotations

from claude_mem.search.onnx_wire import Edit, Graph, Node, edit_model, encode_node


def _lookups(graph: Graph) -> Edit | None:
    edit = Edit()
    for i, gather, mul, cast in graph.fed_dequantized("Gather", 0):
        table, widened_table = gather.inputs[0], mul[1].inputs[0]
        ids, scale, rows = gather.inputs[1], mul[1].inputs[1], cast[1].inputs[0]
        picked, picked_scale, widened = f"{table}/rows", f"{table}/row_scales", f"{table}/rows_f"
        edit.replaced[i] = b"".join(
            (
                encode_node(Node("Gather", [rows, ids], [picked], gather.attributes)),
                encode_node(Node("Gather", [scale, ids], [picked_scale], gather.attributes)),
                encode_node(Node("Cast", [picked], [widened], cast[1].attributes)),
                encode_node(Node("Mul", [widened, picked_scale], gather.outputs, [])),
            )
        )
        edit.dropped |= {mul[0], cast[0]}
        edit.gone |= {table, widened_table}
    return edit if edit.replaced else None


def int8_lookups(model: bytes) -> bytes:
    """`model` (a serialized ONNX ModelProto) with its dequantized table lookups rewritten to
    gather int8 rows first (module docstring); the same bytes when it has none."""
    return edit_model(model, _lookups)
