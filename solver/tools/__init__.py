"""The calculators as tools: JSON Schemas of their inputs, validation gates, an MCP server.

Everything here is generated from the registry, so a tool can never disagree with the library.
"""
