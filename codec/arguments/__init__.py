"""Tool-call arguments: typing by the tool's JSON schema (``schema``), the JSON text emitted as
deltas (``emitter``), incremental JSON (``json_stream``), and the small interface every
format's argument reader implements (``reader``). The readers themselves live with their family
(``codec/formats/<family>/arguments.py``)."""
