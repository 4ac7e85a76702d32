"""Gemini CLI's chat file (`~/.gemini/tmp/<project>/chats/session-*.json`).

The CLI rewrites one pretty-printed JSON document, `{"sessionId", ..., "messages": [...]}`, on
every change; each message is `{"id", "type": "user" | "gemini" | "info" | "error", "content",
"toolCalls": [{"id", "name", "args", "result": [{"functionResponse": ...}], ...}]}`. Messages
only ever append, and only the last one is updated in place (its tool results, its tokens), so
a message is read once another follows it: the bytes up to the end of such a message never
change and the offset can stop there. Messages are found by their lines (`    {` opens one,
`    },` ends one that another follows), which keeps every read bounded like the JSONL hosts'.
A chat written one message a line (JSONL) is read line by line.
"""

from __future__ import annotations

from typing import Any

from claude_mem.transcripts.reader import Lines
from claude_mem.transcripts.shapes import Said, host_id, record, text_of

OPEN, SETTLED = b"    {", b"    },"  # JSON.stringify(chat, null, 2): messages at depth 2
Found = tuple[Said, int]  # what a message says, and the offset just past it


def said(message: dict[str, Any]) -> list[Said]:
    """What one chat message says: the user's words, or the model's text then its calls."""
    kind = message.get("type")
    content = message.get("content")
    text = content if isinstance(content, str) else text_of(_parts(content))
    if kind == "user":
        return [("user", text, None)]
    if kind != "gemini":
        return []
    found: list[Said] = [("assistant", text, None)]
    for call in message.get("toolCalls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            continue
        call_id = host_id(call.get("id"))
        found.append(("tool_use", call["name"], call_id))
        result = _result(call.get("result")) or call.get("resultDisplay")
        if isinstance(result, str) and result:
            found.append(("tool_result", result, call_id))
    return found


def _parts(content: object) -> list[dict[str, Any]]:
    """Gemini `Part`s ({"text": ...}) as text blocks."""
    items = content if isinstance(content, list) else [content]
    return [
        {"type": "text", "text": part["text"]}
        for part in items
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


def _result(result: object) -> str:
    """The text a tool returned to the model: `functionResponse.response.output`."""
    texts: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        output = body.get("output", body.get("error")) if isinstance(body, dict) else None
        if isinstance(output, str):
            texts.append(output)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def messages(read: Lines) -> tuple[list[Found], int]:
    """The settled messages among `read`'s lines, and the offset the next read starts at."""
    found: list[Found] = []
    offset = read.start
    body: list[bytes] | None = None  # the lines of the message being collected
    for line, end in read.lines:
        if line.startswith(b"{") and line.rstrip().endswith(b"}") and body is None:
            one = record(line)  # a whole message on one line: the JSONL form
            if one is not None and "messages" not in one:
                found.extend((item, end) for item in said(one))
                offset = end
                continue
        if line.rstrip() == OPEN:
            body = [b"{"]
            if not found:
                offset = max(offset, end - len(line) - 1)  # the header, up to this message
        elif body is not None:
            if line.rstrip() == SETTLED:
                found.extend((item, end) for item in said(_decode(b"\n".join([*body, b"}"]))))
                body, offset = None, end
            else:
                body.append(line)
    if read.full and offset == read.start:
        offset = read.offset  # a message too big for one read is skipped, bounded
    return found, offset


def _decode(text: bytes) -> dict[str, Any]:
    one = record(text)
    return one if one is not None else {}
