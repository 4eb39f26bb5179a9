"""The parse engine every format shares: marker scanner, contextual lexer (``patterns``), LALR
cursor, stream parser, message builder, and the whole-prompt path.

Nothing in here knows a format: markers and terminal names come from the compiled grammar, and a
family's argument syntax is plugged in through ``codec.arguments.reader.ArgumentReader``.
"""
