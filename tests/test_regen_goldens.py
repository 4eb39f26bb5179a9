"""Goldens are what ``tests/regen_goldens.py`` writes today: a change to the code, the registry
(``golden_options``, ``string_content_only``) or the generator's conversations that would alter a
golden fails here until the goldens are regenerated and the diff reviewed."""

from __future__ import annotations

import pytest

from regen_goldens import plan, report
from support import goldens


@pytest.mark.parametrize("kind", goldens.KINDS)
def test_goldens_are_up_to_date(kind: str) -> None:
    changed, stale = plan([kind])
    assert not report(changed, stale), f"run: python tests/regen_goldens.py --kind {kind}"
