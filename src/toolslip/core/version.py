"""The version of this toolslip, in one place: the CLI, the HTTP User-Agent, MCP and tracing report it."""

__version__ = "0.1.0"
