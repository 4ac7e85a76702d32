"""Edits of a serialized ONNX model at the protobuf wire level, for the rewrites its graph gets
as it loads (`int8_lookup`, `int8_matmul`).

Only the nodes and tensors a rewrite touches are decoded and encoded again; every other field
(most of all the weights) is copied as the bytes it was, through memoryviews, so no `onnx`
package is needed and nothing is copied twice. A model that does not parse is returned
unchanged: ONNX Runtime then gives its own reason for refusing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

_MODEL_GRAPH, _MODEL_OPSET = 7, 8  # ModelProto.graph, .opset_import
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2  # OperatorSetIdProto fields
GRAPH_NODE, GRAPH_INITIALIZER, _GRAPH_VALUE_INFO = 1, 5, 13  # GraphProto fields
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 4, 5, 7  # NodeProto
_VALUE_NAME = 1  # ValueInfoProto.name
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9  # TensorProto fields
_ATTRIBUTE_NAME, _ATTRIBUTE_INT, _ATTRIBUTE_TYPE = 1, 3, 20  # AttributeProto fields
_ATTRIBUTE_TYPE_INT = 2  # AttributeProto.INT
FLOAT, UINT8, INT8 = 1, 2, 3  # TensorProto.DataType values
_VARINT, _LEN = 0, 2  # wire types


class Field(NamedTuple):
    number: int
    payload: memoryview  # a length-delimited field's contents (empty for other wire types)
    value: int  # a varint field's value (0 for other wire types)
    raw: memoryview  # the whole field as it was encoded


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data: memoryview) -> list[Field]:
    """The message's fields in order; ValueError on a wire type protobuf no longer uses."""
    out: list[Field] = []
    at = 0
    while at < len(data):
        start, size, value = at, 0, 0
        tag, at = _varint(data, at)
        wire = tag & 7
        if wire == _VARINT:
            value, at = _varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == _LEN:
            size, at = _varint(data, at)
            at += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if at > len(data):
            raise ValueError("truncated protobuf field")
        payload = data[at - size : at] if wire == _LEN else data[at:at]
        out.append(Field(tag >> 3, payload, value, data[start:at]))
    return out


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def _encode_int(number: int, value: int) -> bytes:
    return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)


def _strings(message: list[Field], number: int) -> list[str]:
    return [bytes(f.payload).decode() for f in message if f.number == number]


class Node(NamedTuple):
    op: str
    inputs: list[str]
    outputs: list[str]
    attributes: list[bytes]  # encoded AttributeProtos, kept as they were
    domain: str = ""


def _node(payload: memoryview) -> Node:
    message = fields(payload)
    op, domain = _strings(message, _NODE_OP), _strings(message, _NODE_DOMAIN)
    attributes = [bytes(f.payload) for f in message if f.number == _NODE_ATTRIBUTE]
    return Node(
        op[0] if op else "",
        _strings(message, _NODE_INPUT),
        _strings(message, _NODE_OUTPUT),
        attributes,
        domain[0] if domain else "",
    )


def encode_node(node: Node) -> bytes:
    """The node as a GraphProto.node field."""
    parts = [encode(_NODE_INPUT, name.encode()) for name in node.inputs]
    parts += [encode(_NODE_OUTPUT, name.encode()) for name in node.outputs]
    parts.append(encode(_NODE_OP, node.op.encode()))
    parts += [encode(_NODE_ATTRIBUTE, attribute) for attribute in node.attributes]
    if node.domain:
        parts.append(encode(_NODE_DOMAIN, node.domain.encode()))
    return encode(GRAPH_NODE, b"".join(parts))


def int_attribute(name: str, value: int) -> bytes:
    """An encoded AttributeProto holding one integer."""
    return (
        encode(_ATTRIBUTE_NAME, name.encode())
        + _encode_int(_ATTRIBUTE_INT, value)
        + _encode_int(_ATTRIBUTE_TYPE, _ATTRIBUTE_TYPE_INT)
    )


class Tensor(NamedTuple):
    dims: list[int]
    data_type: int
    raw: memoryview | None  # its raw_data; None when stored another way (typed lists, external)


def _tensor(payload: memoryview) -> tuple[str, Tensor]:
    message = fields(payload)
    dims: list[int] = []
    for f in message:
        if f.number != _TENSOR_DIMS:
            continue
        if len(f.payload):  # packed
            at = 0
            while at < len(f.payload):
                dim, at = _varint(f.payload, at)
                dims.append(dim)
        else:
            dims.append(f.value)
    data_type = next((f.value for f in message if f.number == _TENSOR_TYPE), 0)
    raw = next((f.payload for f in message if f.number == _TENSOR_RAW), None)
    names = _strings(message, _TENSOR_NAME)
    return (names[0] if names else ""), Tensor(dims, data_type, raw)


def encode_tensor(name: str, data_type: int, dims: list[int], raw: bytes) -> bytes:
    """A tensor of raw little-endian data as a GraphProto.initializer field."""
    parts = [_encode_int(_TENSOR_DIMS, dim) for dim in dims]
    parts += [_encode_int(_TENSOR_TYPE, data_type), encode(_TENSOR_NAME, name.encode())]
    parts.append(encode(_TENSOR_RAW, raw))
    return encode(GRAPH_INITIALIZER, b"".join(parts))


class Graph:
    """A GraphProto's fields with its nodes and initializers decoded, and who makes and uses
    each value: what a rewrite matches its pattern against."""

    def __init__(self, data: memoryview) -> None:
        self.fields = fields(data)
        self.nodes = {
            i: _node(f.payload) for i, f in enumerate(self.fields) if f.number == GRAPH_NODE
        }
        self.initializers: dict[str, tuple[int, Tensor]] = {}
        for i, f in enumerate(self.fields):
            if f.number == GRAPH_INITIALIZER:
                name, tensor = _tensor(f.payload)
                self.initializers[name] = (i, tensor)
        self.producer = {out: i for i, node in self.nodes.items() for out in node.outputs}
        self.uses: dict[str, int] = {}
        for node in self.nodes.values():
            for name in node.inputs:
                self.uses[name] = self.uses.get(name, 0) + 1

    def made_by(self, value: str, op: str) -> tuple[int, Node] | None:
        """(field index, node) of the `op` node that makes `value`, if one does."""
        at = self.producer.get(value)
        if at is None or self.nodes[at].op != op:
            return None
        return at, self.nodes[at]

    def dequantized(self, value: str) -> tuple[tuple[int, Node], tuple[int, Node]] | None:
        """The (Mul, Cast) nodes, with their field indexes, of a `Mul(Cast(q), scale)` that
        makes `value` from constants (no node makes q or scale), its float results used
        once each: the pattern both rewrites replace. None otherwise."""
        mul = self.made_by(value, "Mul")
        if mul is None or len(mul[1].inputs) != 2:
            return None
        cast = self.made_by(mul[1].inputs[0], "Cast")
        if cast is None or {mul[1].inputs[1], cast[1].inputs[0]} & self.producer.keys():
            return None
        if self.uses[value] != 1 or self.uses[mul[1].inputs[0]] != 1:
            return None  # the float tensor is used elsewhere too: leave it
        return mul, cast

    def fed_dequantized(
        self, op: str, operand: int
    ) -> Iterator[tuple[int, Node, tuple[int, Node], tuple[int, Node]]]:
        """(field index, node, Mul, Cast) of every two-input `op` node whose input `operand`
        is `dequantized`."""
        for i, node in self.nodes.items():
            if node.op == op and len(node.inputs) == 2:
                found = self.dequantized(node.inputs[operand])
                if found is not None:
                    yield i, node, *found


@dataclass
class Edit:
    """What a rewrite changes in a graph: fields replaced by new bytes, fields dropped, the
    value names whose shape records (value_info) go with them, fields added at the end."""

    replaced: dict[int, bytes] = field(default_factory=dict)
    dropped: set[int] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    added: list[bytes] = field(default_factory=list)
    domains: dict[str, int] = field(default_factory=dict)  # operator sets the new nodes need

    def _apply(self, graph: Graph) -> bytes:
        gone = {name.encode() for name in self.gone}
        out: list[bytes | memoryview] = []
        for i, f in enumerate(graph.fields):
            if i in self.dropped:
                continue
            if f.number == _GRAPH_VALUE_INFO and any(
                v.number == _VALUE_NAME and bytes(v.payload) in gone for v in fields(f.payload)
            ):
                continue
            out.append(self.replaced.get(i, f.raw))
        return b"".join([*out, *self.added])


def _graph_field(top: list[Field]) -> int:
    return next(i for i, f in enumerate(top) if f.number == _MODEL_GRAPH)


def graph_of(model: bytes) -> Graph:
    """The model's graph, decoded; ValueError or StopIteration when the bytes don't parse."""
    top = fields(memoryview(model))
    return Graph(top[_graph_field(top)].payload)


def edit_model(model: bytes, rewrite: Callable[[Graph], Edit | None]) -> bytes:
    """`model` (a serialized ModelProto) with its graph edited by `rewrite`, which returns None
    when it finds nothing to change; then, and when the model does not parse, the same bytes."""
    try:
        top = fields(memoryview(model))
        at = _graph_field(top)
        graph = Graph(top[at].payload)
        edit = rewrite(graph)
        if edit is None:
            return model
        declared = {
            bytes(d.payload).decode()
            for f in top
            if f.number == _MODEL_OPSET
            for d in fields(f.payload)
            if d.number == _OPSET_DOMAIN
        }
    except (ValueError, IndexError, StopIteration, UnicodeDecodeError):
        return model
    out: list[bytes | memoryview] = [f.raw for f in top]
    out[at] = encode(_MODEL_GRAPH, edit._apply(graph))
    for domain, version in edit.domains.items():
        if domain not in declared:
            opset = encode(_OPSET_DOMAIN, domain.encode()) + _encode_int(_OPSET_VERSION, version)
            out.append(encode(_MODEL_OPSET, opset))
    return b"".join(out)
