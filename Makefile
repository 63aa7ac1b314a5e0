# One task runner for people and CI. `make run` and `make test` are the README's quick start.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := dev,ray,report,local
QUESTION ?= What's the weather in Beijing?

.PHONY: venv system-deps run test check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Reinstall only when the dependency list changes.
$(VENV)/.installed-$(EXTRAS): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[$(EXTRAS)]'
	# BFCL's function docs and questions as data only (its own dependencies are heavy and unused here)
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23
	touch $@

venv: $(VENV)/.installed-$(EXTRAS)

run: venv
	$(BIN)/toolslip run examples/weather.py "$(QUESTION)"

# The HTML-report tests look at the page in a real headless Chromium (Debian's package).
system-deps:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

test: venv system-deps
	$(BIN)/python -m pytest -q

check: venv
	$(BIN)/ruff check src tests examples benchmarks
	$(BIN)/ruff format --check src tests examples benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
