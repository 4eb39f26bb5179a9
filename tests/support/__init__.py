"""Helpers shared by the tests, ``tests/regen_goldens.py`` and the benchmarks.

The golden layout (``goldens``), the parse-test helpers (``parsing``), the prompt-golden
helpers (``prompts``) and the one transformers reference renderer (``reference``) live here
once, so a test, the regeneration script and a benchmark cannot drift apart. Nothing here
imports transformers except ``reference``: importing the package stays cheap.
"""
