"""``python -m codec``: the same command as ``codec``."""

from __future__ import annotations

import sys

from codec.cli import main

sys.exit(main())
