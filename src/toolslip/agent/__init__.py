"""The agent: tools and the loop that runs them.

Owns tools (``tools``: ``@tool``, ``Tool``, ``Toolbox``, JSON Schema and validators from signatures and
docstrings), where a tool's function runs (``execution``, ``_isolated``, ``process``), one call turned into
the result the model reads (``calls``), the loop's extension seam (``hooks``), the loop itself and its
one-call entry points (``loop``: ``Agent``, ``run``, ``arun``), and the hooks that only watch it
(``tracing``, ``debug``).

May import ``core``, ``formats`` (a tool made from a provider's declaration; the debug check),
``providers`` (a model named by a string) and the leaves of ``quality`` (a toolbox searches itself). The
loop knows no provider and no wire format: it talks to a :class:`~toolslip.core.model.Model`. Everything
that changes what a run does (exactly-once, approval, the injection gate, tool search) is a hook in a layer
above, so nothing here imports ``durable``, ``guard`` or the rest of ``quality``.
"""
