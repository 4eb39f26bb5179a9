"""GLM-4.5's argument syntax: GLM's key/value pairs, each marker on a line of its own
(``glm45.jinja``)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

The new lines belong to the markers (the grammar's ``KEY_OPEN__NL`` and its kin), so the reader
sees exactly the tokens GLM-5's does and is GLM's reader: a value raw when its schema says
string, JSON otherwise (``{{ v | tojson(ensure_ascii=False) if v is not string else v }}``).

Not read: GLM-4.5 sometimes writes its arguments as one JSON object after the name
(``<tool_call>get_weather\n{"city": "Paris"}\n</tool_call>``). With no argument marker, the
whole text is the call's name (an ``unknown_tool`` call with no arguments, golden case
``malformed_json_after_name``): a reader is made only at a call's first argument token, so no
family can read a name at the call's close without an engine hook.
"""

from __future__ import annotations

from codec.formats.glm.arguments import KeyValueArguments


class LinedKeyValueArguments(KeyValueArguments):
    """The arguments of one GLM-4.5 call, fed its ``KEY_*`` / ``VALUE_*`` tokens in order."""
