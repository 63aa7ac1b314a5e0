# One task runner for people and CI. `make run` and `make test` are the README's quick start.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := dev,ray,report,local,local-0.5b,postgres,prices
QUESTION ?= What's the weather in Beijing?

# llama-cpp-python has no Linux wheel on PyPI, so llama.cpp is compiled here, tuned for this CPU
# (GGML_NATIVE: -march=native). An Intel CPU may advertise AMX while its OS or hypervisor grants no AMX
# tile state; ggml's AMX kernels then die with SIGILL on the first batched decode (issue 14). So on
# x86-64 AMX is switched off and the rest of the native tuning kept (gcc on aarch64 rejects these flags).
# See docs/local-model.md, which also shows a portable build for a fleet of machines.
LLAMA_VERSION := $(shell grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml | cut -d= -f3)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=ON
ifeq ($(shell uname -m),x86_64)
LLAMA_CFLAGS ?= -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
endif
# pip's wheel cache is keyed by the sdist's URL, not by CMAKE_ARGS or CFLAGS: a wheel built earlier with
# other flags would be reused silently. So the wheel is built once with --no-cache-dir into a folder of
# its own, named by what went into it (version, Python, flags, this CPU's feature list), next to pip's
# cache so it persists wherever that does, and installed from there with --only-binary.
LLAMA_ID := $(shell printf '%s|%s|%s|%s|%s' '$(LLAMA_VERSION)' "$$($(PYTHON) -c 'import sys; print(sys.version_info[:2])')" \
	'$(LLAMA_CMAKE_ARGS)' '$(LLAMA_CFLAGS)' "$$(grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null)" | cksum | cut -d' ' -f1)
LLAMA_WHEELS := $(shell $(PYTHON) -m pip cache dir 2>/dev/null || echo $(HOME)/.cache/pip)/toolslip-llama/$(LLAMA_VERSION)-$(LLAMA_ID)

.PHONY: venv llama-wheel system-deps js-deps run test check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(LLAMA_WHEELS)/built: | $(BIN)/python
	@echo "building llama-cpp-python $(LLAMA_VERSION) from source (once per machine: about 600 CPU-seconds, 5 min on an idle 2-core machine, up to 30 on a busy one)"
	@echo "  CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' CFLAGS='$(LLAMA_CFLAGS)' into $(LLAMA_WHEELS)"
	@# pip is silent for minutes while it compiles: a line a minute shows the build is alive and how far along
	start=$$(date +%s); elapsed() { echo "$$(( ($$(date +%s) - start) / 60 )) min"; }; \
	( while sleep 60; do echo "  still compiling llama.cpp: $$(elapsed) so far (5-16 min expected on 2 cores)"; done ) & \
	ticker=$$!; trap 'kill $$ticker 2>/dev/null' EXIT; \
	rm -rf $(LLAMA_WHEELS).tmp.$$$$ && CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' CFLAGS='$(LLAMA_CFLAGS)' CXXFLAGS='$(LLAMA_CFLAGS)' \
		$(BIN)/pip wheel -q --no-deps --no-cache-dir -w $(LLAMA_WHEELS).tmp.$$$$ 'llama-cpp-python==$(LLAMA_VERSION)' \
		&& mkdir -p $(LLAMA_WHEELS) && mv $(LLAMA_WHEELS).tmp.$$$$/*.whl $(LLAMA_WHEELS)/ && rm -rf $(LLAMA_WHEELS).tmp.$$$$ \
		&& echo "  llama.cpp built in $$(elapsed)"
	touch $@

llama-wheel: $(LLAMA_WHEELS)/built

# Reinstall when the dependency list or the llama.cpp build changes; the second install replaces a
# llama-cpp-python that an older Makefile (or pip's cache) put into this venv.
$(VENV)/.installed-$(EXTRAS)-$(LLAMA_ID): pyproject.toml $(LLAMA_WHEELS)/built | $(BIN)/python
	$(BIN)/pip install -q --find-links $(LLAMA_WHEELS) --only-binary llama-cpp-python -e '.[$(EXTRAS)]'
	$(BIN)/pip install -q --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	# BFCL's function docs and questions as data only (its own dependencies are heavy and unused here)
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23
	rm -f $(VENV)/.installed-* && touch $@

venv: $(VENV)/.installed-$(EXTRAS)-$(LLAMA_ID)

run: venv
	$(BIN)/toolslip run examples/weather.py "$(QUESTION)"

# The HTML-report tests look at the page in a real headless Chromium (Debian's package); the journal's
# PostgreSQL tests start their own server from Debian's postgresql binaries (initdb, pg_ctl).
system-deps:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq postgresql >/dev/null)
	@command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null)

# The console's stream test runs the Vercel AI SDK's own chat client (the `ai` npm package) in Node.
# The threads test runs the Anthropic TypeScript SDK's tool runner (`@anthropic-ai/sdk`) against serve.
js-deps: system-deps
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error

test: venv system-deps js-deps
	$(BIN)/python -m pytest -q

check: venv
	$(BIN)/ruff check src tests examples benchmarks
	$(BIN)/ruff format --check src tests examples benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports  # the layers in pyproject.toml: no upward import, no circle

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
