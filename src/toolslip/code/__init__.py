"""Code mode: the model writes one program that calls the tools; it runs in a sandbox, each call through the hooks."""

from .mode import CODE_FUNCTIONS, INNER_CALLS, INNER_RESULTS, PROGRAM_TOOL, CodeMode, functions_of
from .sandbox import SandboxLimits

__all__ = [
    "CODE_FUNCTIONS",
    "INNER_CALLS",
    "INNER_RESULTS",
    "PROGRAM_TOOL",
    "CodeMode",
    "SandboxLimits",
    "functions_of",
]
