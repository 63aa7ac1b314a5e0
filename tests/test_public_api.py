import subprocess
import sys

import toolslip


def test_all_is_exactly_the_public_names() -> None:
    public = sorted(n for n in toolslip._LAZY) + ["__version__"]
    assert sorted(toolslip.__all__) == sorted(public)
    for name in toolslip._LAZY:
        assert getattr(toolslip, name) is not None, name


def test_import_is_light() -> None:
    # `import toolslip` must not pull the HTTP client, pydantic or the provider SDKs
    heavy = "('aiohttp', 'pydantic', 'openai', 'anthropic', 'httpx')"
    code = f"import sys, toolslip; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
