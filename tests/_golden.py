"""Golden wire JSON written from the providers' documentation: ``tests/fixtures/<format>/<name>.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def golden(fmt: str, name: str) -> dict[str, Any]:
    """Fixture ``name`` of format directory ``fmt`` (``"openai_chat"``): a dict of wire bodies by role."""
    data: dict[str, Any] = json.loads((FIXTURES / fmt / f"{name}.json").read_text())
    return data
