"""Parser plugins for serving engines: ``codec.integrations.vllm`` and ``codec.integrations.sglang``.

Each module imports its engine; this package imports neither, and ``import codec`` never imports
this package. docs/engines.md has the commands.
"""
