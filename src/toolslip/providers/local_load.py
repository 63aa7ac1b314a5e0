"""Loading the embedded model's weights into llama.cpp: once per process, checked first, freed at exit.

Apart from :mod:`toolslip.providers.local` (which decodes with what is loaded here) because loading is its
own concern: the library check that must run before llama.cpp can kill the process, the chat template read
from the file's metadata, and the teardown llama-cpp-python gets wrong on its own.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from .local_chat import ChatTemplate
from .local_decode import Aborter
from .local_probe import check_library

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["INSTALL_HINT", "LoadedModel", "load_llama"]

INSTALL_HINT = "pip install 'toolslip[local]'"


@dataclass(frozen=True, slots=True)
class LoadedModel:
    """A GGUF file in memory, its chat template, the lock that serialises calls to it, and its abort switch."""

    llama: Llama
    template: ChatTemplate
    lock: threading.Lock
    aborter: Aborter


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
        aborter = Aborter()
        aborter.install(llama)
        _loaded[key] = loaded = LoadedModel(llama=llama, template=template, lock=threading.Lock(), aborter=aborter)
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
