"""The core: the neutral transcript and the few words every other layer speaks.

Owns the transcript (``messages``: text, reasoning, files, tool calls, tool results, verbatim provider
parts; requests and responses), the errors (``errors``), a tool's declared effects (``effects``), the
provider seam (``model``: anything that answers a request), what a model yields while streaming
(``streaming``), what a run reports and how it ended (``events``, ``result``), and two leaf helpers any
layer may use (``_display`` for text on a terminal, ``_files`` for importing a user's Python file).

Imports nothing of toolslip outside ``core``: it is the bottom layer. Everything else imports it.
"""
