"""A user's template cannot spend memory or time past its budget, whatever filter, method,
test or comparison it uses; and ``load`` and ``detect`` take templates of a bounded size, checked
before a file is read (issue 21, item 7).

Each case is a template that, before these budgets, built hundreds of megabytes from a text of
a few (``text | list``: eight bytes an item for one byte a character) or ran for minutes inside
the loop budget (``'c' in text`` a hundred thousand times over a 40 MB text; ``map`` calling a
filter for every item). Now each ends in a ``RenderError`` naming the budget it went over.

A case that regressed would hang or swap, so each runs in a forked child with its address space
capped at a gigabyte above the parent's, and a deadline far above what the budgets allow (about
a second of work): a regression fails at the deadline, or as a ``MemoryError``, not after
minutes. Nothing here measures speed.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

import codec
from codec._resources import read_text
from codec.registry import FORMATS
from codec.template_files import MAX_CONFIG_SIZE, MAX_TEMPLATE_SIZE, TemplateTooLargeError

USER = {"role": "user", "content": "hi"}
DEADLINE = 30.0  # seconds; the budgets stop every case below in about one
HEADROOM = 1 << 30  # bytes of address space a case may add to the parent's

TEXT = "{% set big = 'ab' * 20000000 %}"  # 40 MB, within MAX_OUTPUT_CHARS
TWO = TEXT + "{% set other = 'ab' * 20000000 %}"  # another 40 MB, equal but not the same object
ITEMS = "{% set items = ('ab' * 3000000) | list %}"  # 6 million items, within MAX_OUTPUT_CHARS
ROWS = "{% set rows = [range(1000) | list] * 1000 %}"  # a million items, one row of a thousand
LOOP = "{% for i in range(100000) %}"

MEMORY = {
    "text to list": TEXT + "{{ big | list | length }}",
    "split": TEXT + "{{ big.split('a') | length }}",
    "splitlines": "{% set big = '\\n' * 40000000 %}{{ big.splitlines() | length }}",
    "batch of one": "{% set big = 'x' * 20000000 %}{{ big | batch(1) | list | length }}",
    "slice": "{% set big = 'x' * 10000000 %}{{ big | slice(10000000) | list | length }}",
    "unique": "{{ ('x' * 40000000) | unique | list | length }}",
    "tojson of a list": "{{ ('x' * 40000000) | list | tojson | length }}",
}

STEPS = {
    "in": TEXT + LOOP + "{% if 'c' in big %}x{% endif %}{% endfor %}",
    "not in": TEXT + LOOP + "{% if 'c' not in big %}{% endif %}{% endfor %}",
    "is in test": TEXT + LOOP + "{% if 'c' is in big %}x{% endif %}{% endfor %}",
    "equality": TWO + LOOP + "{% if big == other %}{% endif %}{% endfor %}",
    "equalto in select": TWO + LOOP + "{{ [big] | select('equalto', other) | list | length }}{% endfor %}",
    "str.count": TEXT + LOOP + "{{ big.count('c') }}{% endfor %}",
    "str.find": TEXT + LOOP + "{{ big.find('c') }}{% endfor %}",
    "str.startswith": TWO + LOOP + "{{ big.startswith(other) }}{% endfor %}",
    "str.partition": TEXT + LOOP + "{% set t = big.partition('c') %}{% endfor %}",
    "list.index": ITEMS + LOOP + "{{ items.index('b') }}{% endfor %}",
    "loop.changed": TWO + LOOP + "{{ loop.changed(big if loop.index is odd else other) }}{% endfor %}",
    "wordcount": TEXT + LOOP + "{{ big | wordcount }}{% endfor %}",
    "sort": ITEMS + "{% for i in range(100) %}{% set s = items | sort %}{% endfor %}",
    "max": ITEMS + "{% for i in range(1000) %}{{ items | max }}{% endfor %}",
    "dictsort": "{% set d = dict.fromkeys(range(100000)) %}{% for i in range(10000) %}{% set r = d | dictsort %}"
    "{% endfor %}",
    "items of a dict": "{% set d = dict.fromkeys(range(100000)) %}{% for i in range(1000) %}"
    "{% set x = d.items() | list %}{% endfor %}",
    "map, a filter per item": "{% for i in range(1000) %}{{ range(100000) | map('string') | map('length') | sum }}"
    "{% endfor %}",
    "join of a map, an item at a time": "{{ ('x' * 40000000) | map('upper') | join | length }}",
    "list of a map, an item at a time": "{{ ('x' * 40000000) | map(attribute='real') | list | length }}",
    "a filter on rows shared a thousand times": ROWS + LOOP + "{% set r = rows | upper %}{% endfor %}",
    "tojson of shared rows": ROWS + LOOP + "{% set r = rows | tojson %}{% endfor %}",
    "~ with shared rows": ROWS + LOOP + "{% set r = rows ~ '' %}{% endfor %}",
    "equality of nested lists": ROWS
    + "{% set copy = [range(1000) | list] * 1000 %}"
    + LOOP
    + "{% if rows == copy %}{% endif %}{% endfor %}",
    "text is lower": TEXT + LOOP + "{% if big is lower %}{% endif %}{% endfor %}",
    "join of a text, a character at a time": TEXT + LOOP + "{% set r = big | join('') %}{% endfor %}",
    "max of a text": TEXT + LOOP + "{{ big | max }}{% endfor %}",
    "pprint of a mapping": "{% set d = dict.fromkeys(range(100000), 'x') %}"
    + LOOP
    + "{% set r = d | pprint %}{% endfor %}",
    "select, a test per item": "{% for i in range(1000) %}{{ range(100000) | select('odd') | list | length }}"
    "{% endfor %}",
}


def _run(action: Callable[[], object], results: Connection) -> None:
    """In the child: run ``action`` with bounded memory; send back how it ended."""
    pages = int(Path("/proc/self/statm").read_text().split()[0])  # the address space, in pages
    limit = pages * os.sysconf("SC_PAGE_SIZE") + HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        action()
        results.send(("done", ""))
    except BaseException as error:  # the case is what escaped, whatever it is
        results.send((type(error).__name__, str(error)))


def outcome(template: str) -> tuple[str, str]:
    """How rendering ``template`` as a user's template ends (``ended``)."""
    return ended(lambda: codec.load("glm", template=template).render([USER]))


def ended(action: Callable[[], object]) -> tuple[str, str]:
    """How ``action`` ends, run in a forked child: the exception's type name and text,
    ``"done"``, or ``"past the deadline"``."""
    context = multiprocessing.get_context("fork")
    results, sent = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(action, sent))
    child.start()
    child.join(DEADLINE)
    if child.is_alive():
        child.kill()
        child.join()
        return "past the deadline", ""
    return results.recv() if results.poll() else (f"died with exit code {child.exitcode}", "")


@pytest.mark.parametrize("template", MEMORY.values(), ids=MEMORY.keys())
def test_building_a_large_sequence_is_refused_before_it_is_built(template: str) -> None:
    kind, text = outcome(template)
    assert kind == "BudgetExceeded", (kind, text)
    assert "(codec.render.budget.MAX_OUTPUT_CHARS)" in text


@pytest.mark.parametrize("template", STEPS.values(), ids=STEPS.keys())
def test_reading_a_large_value_over_and_over_stops_at_the_step_budget(template: str) -> None:
    kind, text = outcome(template)
    assert kind == "BudgetExceeded", (kind, text)
    assert "(codec.render.budget.MAX_STEPS)" in text


@pytest.mark.parametrize(
    "call",
    [
        "('x' * 1000).replace('x', 'y' * 100000)",
        "('a,' * 10000000).split(',')",
        "('y' * 100000).join(range(1000) | map('string'))",
        "('\\t' * 1000).expandtabs(100000)",
        "'x'.center(10**9)",
    ],
)
def test_an_estimate_holds_inside_a_loop(call: str) -> None:
    """Jinja passes a loop's variables to every call in its body as ``_loop_vars``: the
    estimate, which takes the method's own arguments, used to fail on it and be skipped."""
    template = "{% for i in range(1) %}{{ " + call + " | length }}{% endfor %}"
    kind, text = outcome(template)
    assert kind == "BudgetExceeded", (kind, text)
    assert " would build " in text


def test_a_budget_error_is_a_render_error() -> None:
    """In the process itself, for the type: the cases above cross a process boundary by name."""
    with pytest.raises(codec.RenderError, match=r"went over its budget: .*\(codec\.render\.budget\.MAX_STEPS\)"):
        codec.load("glm", template=STEPS["in"]).render([USER])


def test_a_range_past_the_sandbox_limit_is_a_render_error() -> None:
    """Jinja's sandbox caps ``range`` itself (``jinja2.sandbox.MAX_RANGE``): no budget needed."""
    with pytest.raises(codec.RenderError, match="MAX_RANGE"):
        codec.load("glm", template="{{ range(0, 10**12, 1) | length }}").render([USER])


# Sizes: load() and detect() refuse a template (or a config) past its limit, unread


def padded(size: int) -> str:
    """GLM's template, padded with a comment to ``size`` characters (all ASCII: as many bytes)."""
    glm = read_text("templates", FORMATS["glm"].template)
    return glm + "{#" + "x" * (size - len(glm) - 4) + "#}"


def test_every_bundled_template_is_far_below_the_size_limit() -> None:
    for spec in FORMATS.values():
        assert len(read_text("templates", spec.template).encode()) < MAX_TEMPLATE_SIZE / 20


def test_a_template_at_the_limit_loads_and_one_past_it_is_refused(tmp_path: Path) -> None:
    at_limit = padded(MAX_TEMPLATE_SIZE)
    (tmp_path / "at.jinja").write_text(at_limit, encoding="utf-8")
    (tmp_path / "past.jinja").write_text(at_limit + "x", encoding="utf-8")
    assert codec.load(tmp_path / "at.jinja").name == "glm"
    assert codec.load("glm", template=at_limit).name == "glm"
    assert codec.detect(at_limit).format == "glm"
    pattern = rf"has {MAX_TEMPLATE_SIZE + 1:,} (bytes|characters), over the limit of {MAX_TEMPLATE_SIZE:,} "
    for load in (
        lambda: codec.load(tmp_path / "past.jinja"),
        lambda: codec.load("glm", template=tmp_path / "past.jinja"),
        lambda: codec.load("glm", template=at_limit + "x"),
        lambda: codec.load(template=at_limit + "x"),
        lambda: codec.detect(at_limit + "x"),
    ):
        with pytest.raises(TemplateTooLargeError, match=pattern + r"\(codec\.template_files\.MAX_TEMPLATE_SIZE\)"):
            load()


def test_a_huge_file_is_refused_without_being_read(tmp_path: Path) -> None:
    """A sparse 8 GiB file (no disk used): reading it whole would need 8 GiB of memory."""
    for name in ("chat_template.jinja", "tokenizer_config.json"):
        huge = tmp_path / name
        with huge.open("wb") as file:
            file.truncate(8 << 30)
        for path in (huge, tmp_path):  # the file, and the model directory holding it
            kind, text = ended(lambda path=path: codec.load(path))
            assert kind == "TemplateTooLargeError", (kind, text)
            assert f"has {8 << 30:,} bytes, over the limit of " in text
        huge.unlink()


def test_a_device_is_refused_unread() -> None:
    """``/dev/zero`` never ends; it has no size to look up."""
    kind, text = ended(lambda: codec.load("/dev/zero"))
    assert (kind, text) == (
        "RenderError",
        "/dev/zero is not a regular file (a device, a pipe?), so it holds no chat template",
    )


def test_a_config_has_its_own_larger_limit_and_its_template_the_template_limit(tmp_path: Path) -> None:
    """A tokenizer config lists the added tokens too: a few MB of them are fine; the template
    inside is held to the template limit."""
    config = tmp_path / "tokenizer_config.json"
    tokens = {str(n): {"content": f"<|reserved_{n}|>", "special": True} for n in range(60_000)}
    config.write_text(json.dumps({"added_tokens_decoder": tokens, "chat_template": padded(100_000)}))
    assert MAX_TEMPLATE_SIZE < config.stat().st_size < MAX_CONFIG_SIZE
    assert codec.load(config).name == "glm"
    config.write_text(json.dumps({"chat_template": padded(MAX_TEMPLATE_SIZE) + "x"}))
    with pytest.raises(TemplateTooLargeError, match=r'the "chat_template" of .* over the limit of 1,048,576'):
        codec.load(tmp_path)
    with config.open("wb") as file:
        file.truncate(MAX_CONFIG_SIZE + 1)
    with pytest.raises(TemplateTooLargeError, match=r"\(codec\.template_files\.MAX_CONFIG_SIZE\)"):
        codec.load(config)
