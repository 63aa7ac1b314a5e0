"""The injection guard: once untrusted text is in the context, the harness decides what may run.

Owns ``provenance`` (where a value in a call came from), ``policy`` with ``rules`` (the taint gate and the
plain-Python rules it applies), ``secrets`` (secrets as handles; calls that would leak them blocked) and
``spotlight`` (untrusted output delimited or datamarked for the model).

Hooks on the loop that ask through ``durable``'s decisions: may import ``core``, ``formats``, ``agent`` and
``durable``.
"""
