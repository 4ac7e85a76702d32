"""The MCP server: memory tools for agents over stdio (`claude-mem mcp`).

Importing this package is cheap; the SDK loads only when `server.build_server()` runs, which
`claude-mem mcp` does once a message needs more than the handshake (`front.py`).
"""
