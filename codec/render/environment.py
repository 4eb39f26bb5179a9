"""The Jinja environment chat templates run in, behaving exactly like transformers'.

``apply_chat_template`` compiles a template with ``trim_blocks``, ``lstrip_blocks``, the
``loopcontrols`` extension and a ``{% generation %}`` block tag, and gives it ``tojson`` (a plain
``json.dumps``, ``ensure_ascii=False``, no HTML escaping), ``raise_exception``, ``strftime_now``, a
limited ``dict`` and a ``namespace`` that refuses underscore names. The same set-up is built here,
with two changes that do not alter output: ``strftime_now`` reads the ``now`` given to ``render``
(passed per render, since compiled templates are shared), and the templates bundled with codec —
trusted code — run in a plain ``Environment`` with faster attribute lookups and calls (about
2-6x faster than the sandbox; the render-parity tests hold it to byte-identical output). A
user's template always runs in ``ImmutableSandboxedEnvironment``, on a budget
(``codec.render.sandbox``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any, NoReturn

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
import jinja2.runtime

from codec.errors import RenderError
from codec.render.sandbox import StrictSandbox

# What jinja's own analysis cannot see as a variable: the names render passes to every template.
RENDER_NAMES = frozenset({"messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token"})


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # jinja's built-in tojson escapes <, > and & for HTML; chat templates need the JSON as is.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: str) -> NoReturn:
    raise jinja2.TemplateError(message)


def strftime_now(now: datetime | None) -> Callable[[str], str]:
    """The template's ``strftime_now(format)``, reading ``now`` (the clock when ``None``)."""

    def format_now(fmt: str) -> str:
        return (now or datetime.now()).strftime(fmt)

    return format_now


class TemplateDict:
    """The template's ``dict``: a call and ``fromkeys``, nothing to reach Python internals by."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        """``dict.fromkeys``."""
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(jinja2.utils.Namespace):
    """``namespace()`` refusing underscore attributes, which could reach CPython internals."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        # jinja's own signature trick: `self` is taken from *args so `namespace(self=1)` works.
        self, rest = args[0], args[1:]
        attributes = dict(*rest, **kwargs)
        for name in attributes:
            TemplateNamespace.check_name(name)
        jinja2.utils.Namespace.__init__(self, attributes)

    def __setitem__(self, name: str, value: Any) -> None:
        TemplateNamespace.check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def check_name(name: object) -> None:
        """Refuse an underscore-prefixed attribute name."""
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, "
                f"but got {name!r}. Please rename the attribute."
            )


class GenerationBlock(jinja2.ext.Extension):
    """``{% generation %}…{% endgeneration %}``: marks assistant text for transformers' token
    masks. Rendering only needs its body, produced through a call block as transformers does
    (so ``set`` inside it stays local, as there)."""

    tags = {"generation"}  # noqa: RUF012 - jinja's Extension API declares tags as a class set

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        """Parse the block into a call of ``_body`` with the block as its caller."""
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _body(self, caller: Callable[[], str]) -> str:
        return caller()


_DICT_ATTRIBUTES = frozenset(dir(dict))

# Callables that never ask jinja for the context (no `jinja_pass_arg`): macros, the str, dict and
# list methods templates call, `dict(...)`, `namespace(...)` and `range(...)`. Context.call
# inspects every callee for that marker; these skip the inspection.
_PLAIN_CALLABLE_TYPES = frozenset({jinja2.runtime.Macro, type(len), TemplateDict})


class TrustedContext(jinja2.runtime.Context):
    """``Context.call`` without the per-call inspection for callables known not to need it."""

    # Dunder names as in jinja: a template may pass keywords named `self` or `obj` to the callee.
    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call ``__obj`` as jinja does."""
        plain = type(__obj) in _PLAIN_CALLABLE_TYPES or __obj is TemplateNamespace or __obj is range
        if not plain:
            return super().call(__obj, *args, **kwargs)
        if kwargs:
            kwargs.pop("_block_vars", None)
            kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:
            return __self.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception"
            )


class TrustedEnvironment(jinja2.Environment):
    """A plain environment for codec's own templates, with a faster ``a.b`` on dicts.

    jinja tries ``getattr(a, "b")`` first and falls back to ``a["b"]``; on a dict the first
    step raises unless ``b`` is a dict method, so that case can go straight to the lookup.
    """

    context_class = TrustedContext

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute`` as jinja resolves it."""
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


def _configure(env: jinja2.Environment) -> jinja2.Environment:
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = strftime_now(None)
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


@lru_cache(maxsize=64)
def compile_template(source: str, trusted: bool) -> jinja2.Template:
    """``source`` compiled once per (source, trusted); a syntax error is a ``RenderError``."""
    env, ast = _parsed(source, trusted)
    try:
        code = env.compile(ast)
    except (RecursionError, SyntaxError):  # Jinja's compiler recurses once per level of nested
        raise RenderError(_TOO_DEEP) from None  # blocks; Python's own caps the code's nesting
    return env.template_class.from_code(env, code, env.make_globals(None), None)


_TOO_DEEP = "the chat template nests its blocks or expressions too deeply to compile"


@lru_cache(maxsize=64)
def _parsed(source: str, trusted: bool) -> tuple[jinja2.Environment, jinja2.nodes.Template]:
    """The environment and the template's syntax tree, parsed once for compiling and for
    finding the template's variables."""
    kind = TrustedEnvironment if trusted else StrictSandbox
    env = kind(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    _configure(env)
    if isinstance(env, StrictSandbox):
        env.budget_filters()
    try:
        return env, env.parse(source)
    except jinja2.TemplateSyntaxError as error:
        raise RenderError(f"the chat template does not compile: {error.message}, line {error.lineno}") from None
    except RecursionError:  # Jinja's parser recurses once per level of nesting
        raise RenderError(_TOO_DEEP) from None


@lru_cache(maxsize=64)
def template_variables(source: str, trusted: bool) -> frozenset[str]:
    """The options a template reads: the variables it takes from its caller.

    ``jinja2.meta.find_undeclared_variables`` also reports names the template assigns inside a
    branch or loop and reads later (GLM's ``content``, Gemma's ``role``). Of the names it
    reports, a name is kept when the template never assigns it, or when its root scope reads it
    before assigning it — the ``{% set x = x if x is defined else d %}`` idiom of
    Solar's and Gemma's parameters — or a macro reads before assigning it (a ``set`` in a macro
    is the macro's own: gpt-oss's ``{%- if reasoning_effort is not defined %}{%- set
    reasoning_effort = "medium" %}`` in ``build_system_message``).
    """
    env, ast = _parsed(source, trusted)
    reported = jinja2.meta.find_undeclared_variables(ast) - env.globals.keys() - RENDER_NAMES
    events: list[tuple[str, bool, bool]] = []
    _name_events(ast, True, events)
    stored = {name for name, is_store, _ in events if is_store}
    first_at_root: dict[str, bool] = {}
    for name, is_store, at_root in events:
        if at_root:
            first_at_root.setdefault(name, is_store)
    kept = _read_first_in_macros(ast)
    return frozenset(
        name for name in reported if name not in stored or first_at_root.get(name) is False or name in kept
    )


def _read_first_in_macros(ast: jinja2.nodes.Template) -> set[str]:
    """The names some macro reads before it assigns them (its parameters and the template's
    macros aside): what it reads then is the caller's variable."""
    found: set[str] = set()
    macros = list(ast.find_all(jinja2.nodes.Macro))
    for macro in macros:
        events: list[tuple[str, bool, bool]] = []
        for child in macro.body:
            _name_events(child, True, events)
        first: dict[str, bool] = {}
        for name, is_store, in_body in events:
            if in_body:
                first.setdefault(name, is_store)
        params = {arg.name for arg in macro.args} | {other.name for other in macros}
        found.update(name for name, is_store in first.items() if not is_store and name not in params)
    return found


def _name_events(node: jinja2.nodes.Node, at_root: bool, out: list[tuple[str, bool, bool]]) -> None:
    """Every read and assignment of a name, in the order the template runs them: ``(name,
    is_store, at_root)``. Loop, macro and call-block bodies are not at the root scope."""
    nodes = jinja2.nodes
    if isinstance(node, nodes.Name):
        out.append((node.name, node.ctx != "load", at_root))
    elif isinstance(node, (nodes.Assign, nodes.AssignBlock)):
        # The value is computed before the name is bound: `set x = x | default(1)` reads first.
        for child in node.iter_child_nodes(exclude=("target",)):
            _name_events(child, at_root, out)
        _name_events(node.target, at_root, out)
    elif isinstance(node, nodes.For):
        _name_events(node.iter, at_root, out)
        for child in node.iter_child_nodes(exclude=("iter",)):
            _name_events(child, False, out)
    elif isinstance(node, nodes.Macro):
        out.append((node.name, True, at_root))
        for child in node.iter_child_nodes():
            _name_events(child, False, out)
    elif isinstance(node, nodes.CallBlock):
        _name_events(node.call, at_root, out)
        for child in node.iter_child_nodes(exclude=("call",)):
            _name_events(child, False, out)
    else:
        for child in node.iter_child_nodes():
            _name_events(child, at_root, out)


@lru_cache(maxsize=64)
def template_strings(source: str, trusted: bool) -> frozenset[str]:
    """Every string literal in the template's code (``'developer'`` in ``role in ['system',
    'developer']``), not its output text: what the template can compare a value with."""
    _, ast = _parsed(source, trusted)
    found: set[str] = set()
    for node in ast.find_all(jinja2.nodes.Const):
        # Compiling folds a literal list into one constant (``Const(['system', 'developer'])``).
        values = node.value if isinstance(node.value, (list, tuple)) else (node.value,)
        found.update(value for value in values if isinstance(value, str))
    return frozenset(found)
