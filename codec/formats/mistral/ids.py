"""The ids ``codec`` makes for Mistral calls the model wrote without one: nine letters or digits,
as mistral-common makes them, because Mistral-Small-3.2's template writes a call's id after
``[CALL_ID]`` and refuses any other (``raise_exception`` on an id that is not nine letters or
digits): an id ``codec`` made must render back."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 9


def new_id(index: int) -> str:
    """A random id of nine letters or digits (``index`` is the call's position; not used)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(ID_LENGTH))
