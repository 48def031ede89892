"""MCP tool servers in tests: recorded, replayed and scripted.

:mod:`.fake` holds the scripted fake tool servers (what a fake model is to the
model side, for the tool side of an agent run).
"""
