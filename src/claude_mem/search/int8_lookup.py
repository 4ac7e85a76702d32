"""The model's lookup tables kept int8 in memory: a rewrite of its graph as it loads.

The pinned model stores each embedding table as int8 rows and a per-row scale, dequantized by
`Gather(Mul(Cast(rows), scale), ids)`. ONNX Runtime folds that constant `Mul(Cast(...))` when
the session opens, so the word table (30,522 × 384) lives in memory as float32, four times its
int8 size (bench/NOTES.md). Rewritten as `Mul(Cast(Gather(rows, ids)), Gather(scale, ids))`,
the tables stay int8 and only the rows a text uses are dequantized, by the same operations on
the same numbers: the output is unchanged (tests/test_search_embed.py compares it bit for bit).

The file's bytes (checked against their pin) are edited at the protobuf wire level, touching
only the few nodes of the pattern, so no `onnx` package is needed; a graph without the pattern
is returned unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

_MODEL_GRAPH = 7  # ModelProto.graph
_GRAPH_NODE, _GRAPH_VALUE_INFO = 1, 13  # GraphProto.node, .value_info
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP, _NODE_ATTRIBUTE = 1, 2, 4, 5  # NodeProto fields
_VALUE_NAME = 1  # ValueInfoProto.name
_LEN = 2  # the wire type of strings and messages


class _Field(NamedTuple):
    number: int
    payload: memoryview  # a length-delimited field's contents; other wire types are kept raw
    raw: memoryview  # the whole field as it was encoded (views: the weights are not copied)


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: memoryview) -> list[_Field]:
    out: list[_Field] = []
    at = 0
    while at < len(data):
        start, size = at, 0
        tag, at = _varint(data, at)
        wire = tag & 7
        if wire == 0:
            _, at = _varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == _LEN:
            size, at = _varint(data, at)
            at += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        payload = data[at - size : at] if wire == _LEN else data[at:at]
        out.append(_Field(tag >> 3, payload, data[start:at]))
    return out


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


class _Node(NamedTuple):
    op: str
    inputs: list[str]
    outputs: list[str]
    attributes: list[bytes]


def _node(payload: memoryview) -> _Node:
    fields = _fields(payload)

    def strings(number: int) -> list[str]:
        return [bytes(f.payload).decode() for f in fields if f.number == number]

    op = strings(_NODE_OP)
    attributes = [bytes(f.payload) for f in fields if f.number == _NODE_ATTRIBUTE]
    return _Node(op[0] if op else "", strings(_NODE_INPUT), strings(_NODE_OUTPUT), attributes)


def _encode_node(node: _Node) -> bytes:
    parts = [_field(_NODE_INPUT, name.encode()) for name in node.inputs]
    parts += [_field(_NODE_OUTPUT, name.encode()) for name in node.outputs]
    parts.append(_field(_NODE_OP, node.op.encode()))
    parts += [_field(_NODE_ATTRIBUTE, attribute) for attribute in node.attributes]
    return _field(_GRAPH_NODE, b"".join(parts))


def _rewrite_graph(graph: memoryview) -> bytes | None:
    """The graph with each dequantized lookup rewritten, or None when it has none."""
    fields = _fields(graph)
    nodes = {i: _node(f.payload) for i, f in enumerate(fields) if f.number == _GRAPH_NODE}
    producer = {out: i for i, node in nodes.items() for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    replaced: dict[int, bytes] = {}
    dropped: set[int] = set()
    gone: set[bytes] = set()
    for i, gather in nodes.items():
        if gather.op != "Gather" or len(gather.inputs) != 2 or gather.inputs[0] not in producer:
            continue
        mul_at = producer[gather.inputs[0]]
        mul = nodes[mul_at]
        if mul.op != "Mul" or len(mul.inputs) != 2 or mul.inputs[0] not in producer:
            continue
        cast_at = producer[mul.inputs[0]]
        cast = nodes[cast_at]
        if cast.op != "Cast" or mul.inputs[1] in producer or cast.inputs[0] in producer:
            continue  # the rows and the scale must be initializers
        if uses[gather.inputs[0]] != 1 or uses[mul.inputs[0]] != 1:
            continue  # the float table is used elsewhere too: leave it
        table, ids, scale, rows = gather.inputs[0], gather.inputs[1], mul.inputs[1], cast.inputs[0]
        picked, picked_scale, widened = f"{table}/rows", f"{table}/row_scales", f"{table}/rows_f"
        replaced[i] = b"".join(
            (
                _encode_node(_Node("Gather", [rows, ids], [picked], gather.attributes)),
                _encode_node(_Node("Gather", [scale, ids], [picked_scale], gather.attributes)),
                _encode_node(_Node("Cast", [picked], [widened], cast.attributes)),
                _encode_node(_Node("Mul", [widened, picked_scale], gather.outputs, [])),
            )
        )
        dropped |= {mul_at, cast_at}
        gone |= {table.encode(), mul.inputs[0].encode()}
    if not replaced:
        return None
    out: list[bytes | memoryview] = []
    for i, f in enumerate(fields):
        if i in dropped:
            continue
        if f.number == _GRAPH_VALUE_INFO and any(
            v.number == _VALUE_NAME and bytes(v.payload) in gone for v in _fields(f.payload)
        ):
            continue  # the shape of a table that no longer exists
        out.append(replaced.get(i, f.raw))
    return b"".join(out)


def int8_lookups(model: bytes) -> bytes:
    """`model` (a serialized ONNX ModelProto) with its dequantized table lookups rewritten to
    gather int8 rows first (module docstring); unchanged when it has none, and when it does
    not parse: ONNX Runtime then gives its own reason for refusing it."""
    out: list[bytes | memoryview] = []
    changed = False
    try:
        for f in _fields(memoryview(model)):
            graph = _rewrite_graph(f.payload) if f.number == _MODEL_GRAPH else None
            if graph is None:
                out.append(f.raw)
            else:
                out.append(_field(_MODEL_GRAPH, graph))
                changed = True
    except (ValueError, IndexError):
        return model
    return b"".join(out) if changed else model
