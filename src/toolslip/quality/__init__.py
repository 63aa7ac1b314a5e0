"""Tool quality: what the model sees of each tool, checked (lint) and searched (tool search).

Two levels, because a toolbox searches itself and the scripted demo counts tokens, while lint and the
search hook work on tools and runs:

- leaves, below ``providers`` and ``agent``: ``text`` (words of any script, identifiers split, queries
  expanded), ``index`` (BM25 over tool declarations) and ``tokens`` (what declarations cost per wire);
- above ``agent``: ``lint`` with ``lint_rules`` (the linter and its heuristics), ``search`` (the
  ``tool_search`` hook) and ``embedding`` (a static embedding fused with the index).

The layer contracts in ``pyproject.toml`` name each level's modules.
"""
