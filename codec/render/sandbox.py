"""``StrictSandbox``: the environment a user's chat template runs in — Jinja's immutable
sandbox, refusing escapes loudly and running on a budget (``codec.render.budget``).

The budget needs to see every place a template can spend, so the sandbox changes how Jinja
compiles templates, without changing what they print:

- nothing is computed at compile time: Jinja folds constant expressions while compiling
  (``{{ 'x' | center(10**9) }}`` would run inside ``codec.load``), so the optimizer is off
  (``optimized=False``) and constant output is not pre-computed either (``_output_child_to_const``);
- each loop's iterable is wrapped (``budget_loop``) so every iteration is counted, and each loop
  iteration, macro call and block spends its body's size in steps (``_budgeted``);
- ``~``, slices, the ``*``, ``**``, ``%`` and ``+`` operators, calls, filters and printed values
  go through methods that estimate or measure what they build (``codec.render.amplifiers``);
- every filter and test call spends ``CALL_STEPS``, and filters, tests, methods and comparisons
  spend the work of reading what they are given (``budget.work``) before they run;
- the output, and every macro's or block's output, is counted as it is joined
  (``Environment.concat``).
"""

from __future__ import annotations

import copy
import functools
import types
from collections.abc import Callable, Mapping, Sized
from typing import Any

import jinja2
import jinja2.compiler
import jinja2.nodes
import jinja2.runtime
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from codec.render import amplifiers
from codec.render.budget import CALL_STEPS, CHARS_PER_STEP, Budget, Counted, current, text_size


class BudgetedCodeGenerator(jinja2.compiler.CodeGenerator):
    """Jinja's code generator, routing what a template spends through the environment."""

    def visit_Call(self, node: jinja2.nodes.Call, frame: jinja2.compiler.Frame, forward_caller: bool = False) -> None:
        """Calls go through ``environment.call``, except the budget's own calls put in by
        ``_budgeted``, written as direct calls (the parser makes no ``EnvironmentAttribute``
        node, so a template cannot reach them)."""
        if isinstance(node.node, jinja2.nodes.EnvironmentAttribute) and node.node.name in _BUDGET_CALLS:
            self.write(f"environment.{node.node.name}(")
            self.visit(node.args[0], frame)
            self.write(")")
            return
        super().visit_Call(node, frame, forward_caller=forward_caller)

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: jinja2.compiler.Frame) -> None:
        """``a ~ b`` as ``environment.budget_concat(join, (a, b))``, with Jinja's own join."""
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        else:
            join = "markup_join" if frame.eval_ctx.autoescape else "str_join"
        self.write(f"environment.budget_concat({join}, (")
        for piece in node.nodes:
            self.visit(piece, frame)
            self.write(", ")
        self.write("))")

    def visit_Getitem(self, node: jinja2.nodes.Getitem, frame: jinja2.compiler.Frame) -> None:
        """A slice copies its part of the value: charged (Jinja slices bypass ``getitem``)."""
        if not isinstance(node.arg, jinja2.nodes.Slice):
            super().visit_Getitem(node, frame)
            return
        self.write("environment.budget_charge(")
        super().visit_Getitem(node, frame)
        self.write(")")

    def visit_Compare(self, node: jinja2.nodes.Compare, frame: jinja2.compiler.Frame) -> None:
        """``a in b``, ``a == b``: each operand read through ``environment.budget_read``, which
        spends the work of comparing with it (a long text searched a million times over)."""
        self.write("(environment.budget_read(")
        self.visit(node.expr, frame)
        self.write(")")
        for operand in node.ops:
            self.visit(operand, frame)
        self.write(")")

    def visit_Operand(self, node: jinja2.nodes.Operand, frame: jinja2.compiler.Frame) -> None:
        """One ``op b`` of a comparison, ``b`` read as in ``visit_Compare``."""
        self.write(f" {jinja2.compiler.operators[node.op]} environment.budget_read(")
        self.visit(node.expr, frame)
        self.write(")")

    def _output_child_to_const(self, node: jinja2.nodes.Expr, frame: jinja2.compiler.Frame, finalize: Any) -> str:
        """Only literal template text is output as a constant; every expression is evaluated
        when the template renders, on its budget."""
        if not isinstance(node, jinja2.nodes.TemplateData):
            raise jinja2.nodes.Impossible()
        return super()._output_child_to_const(node, frame, finalize)


_BUDGET_CALLS = frozenset({"budget_loop", "budget_steps"})
_BODIES = (jinja2.nodes.For, jinja2.nodes.Macro, jinja2.nodes.CallBlock, jinja2.nodes.Block)


def _budget_call(name: str, argument: jinja2.nodes.Node, lineno: int) -> jinja2.nodes.Call:
    """``environment.<name>(argument)`` as a node (Jinja allows no node types of our own)."""
    function = jinja2.nodes.EnvironmentAttribute(name, lineno=lineno)
    return jinja2.nodes.Call(function, [argument], [], None, None, lineno=lineno)


def _budgeted(tree: jinja2.nodes.Template) -> jinja2.nodes.Template:
    """A copy of a template's syntax tree on the budget: every loop iterates
    ``environment.budget_loop(iterable)``, and every loop, macro, call block and block body
    starts by spending its size in steps. (Jinja allows no node types of our own, so these are
    calls.)"""
    tree = copy.deepcopy(tree, {id(tree.environment): tree.environment})
    bodies: list[Any] = list(tree.find_all(_BODIES))
    for node in bodies:
        node.body = [_steps(node.body, node.lineno), *node.body]
        if isinstance(node, jinja2.nodes.For):
            node.iter = _budget_call("budget_loop", node.iter, node.iter.lineno)
    return tree


def _steps(body: list[jinja2.nodes.Node], lineno: int) -> jinja2.nodes.ExprStmt:
    """A statement spending the size of ``body`` (its nodes, nested ones included) in steps."""
    size = sum(1 + sum(1 for _ in node.find_all(jinja2.nodes.Node)) for node in body)
    return jinja2.nodes.ExprStmt(_budget_call("budget_steps", jinja2.nodes.Const(size), lineno), lineno=lineno)


def _join(pieces: Any) -> str:
    """``Environment.concat``: the output, a macro's or a block's, counted as it arrives."""
    return "".join(current().output(pieces))


def _printed(value: Any) -> Any:
    """``Environment.finalize``: a value printed with ``{{ }}``, whose text is estimated first."""
    if type(value) is not str:
        budget = current()
        budget.expect(text_size(value), "printing a value")  # estimates come first: they say more
        budget.read(value)
    return value


class StrictSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, where reaching for an unsafe attribute (``__class__``,
    ``__globals__``, ``_private``) raises at once instead of quietly printing nothing — a
    template that tries to escape is refused, not half-rendered — and every render spends from
    the current ``Budget``."""

    code_generator_class = BudgetedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})
    concat = staticmethod(_join)

    def __init__(self, **options: Any) -> None:
        super().__init__(optimized=False, finalize=_printed, **options)

    def _generate(
        self, source: jinja2.nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        """Jinja's hook for generating a template's code: here, from the budgeted tree."""
        return super()._generate(_budgeted(source), name, filename, defer_init)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        """Refuse the access (Jinja would return an undefined that prints as nothing)."""
        raise jinja2.exceptions.SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe"
        )

    def budget_filters(self) -> None:
        """Put every filter and test on the budget (once the environment's are all set)."""
        for name, function in self.filters.items():
            self.filters[name] = _budgeted_filter(name, function)
        for name, test in self.tests.items():
            self.tests[name] = _budgeted_test(name, test)

    def budget_read(self, value: Any) -> Any:
        """An operand of a comparison, its reading spent (called by the compiled template)."""
        kind = type(value)
        if kind is not str or len(value) >= CHARS_PER_STEP:  # a short text reads in no time
            budget = current()
            budget.step(budget.measure(value))
        return value

    def budget_loop(self, iterable: Any) -> Counted:
        """A loop's iterable, counted (called by the compiled template)."""
        return Counted(iterable, current())

    def budget_steps(self, size: int) -> None:
        """Spend a loop body's or a macro body's size (called by the compiled template)."""
        current().step(size)

    def budget_concat(self, join: Callable[[Any], str], pieces: tuple[Any, ...]) -> str:
        """``a ~ b ~ ...``, its length estimated first (called by the compiled template)."""
        budget = current()
        budget.expect(sum(text_size(piece) for piece in pieces), "joining text with ~")
        budget.read(*(piece for piece in pieces if type(piece) is not str))  # str() of a value walks it
        return budget.charge(join(pieces), "text joined with ~")

    def budget_charge(self, value: Any) -> Any:
        """A slice of a value, charged (called by the compiled template)."""
        return current().charge(value, "a slice")

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        """``*``, ``**``, ``%`` estimated before they run; all four measured after."""
        budget = current()
        if operator == "*":
            budget.expect(amplifiers.repeat(left, right), "repeating with *")
        elif operator == "**":
            budget.digits(amplifiers.power_digits(left, right), "a power computed with **")
        elif operator == "%":
            budget.expect(amplifiers.printf(left, right), "formatting with %")
        budget.read(left, right)
        return budget.charge(self.binop_table[operator](left, right), f"the result of {operator}")

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call ``__obj`` as the sandbox does, counted, estimated when it can build much more
        than it is given, and measured after (a macro's output is counted as it is joined)."""
        budget = current()
        budget.call()
        args = _estimated_call(budget, __obj, args, kwargs)
        if isinstance(__obj, jinja2.runtime.LoopContext) and args:  # a recursive loop's `loop(children)`
            args = (Counted(args[0], budget), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(__obj, jinja2.runtime.Macro):
            return result
        return budget.charge(result, f"the result of {getattr(__obj, '__name__', 'a call')}()")


def _estimated_call(budget: Budget, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Spend the work of reading what a call is given (not for a macro, whose body is counted as
    it runs), and refuse a call estimated to build too much; returns the arguments to call with
    (``join`` is given its items as a list, read once)."""
    owner = getattr(function, "__self__", None)
    wrapped = getattr(function, "__wrapped__", None)  # the sandbox's wrapper of str.format
    if type(function) is types.BuiltinMethodType and isinstance(owner, (str, bytes)):
        estimate = amplifiers.METHODS.get(function.__name__)
        if function.__name__ == "join" and args and not isinstance(args[0], Sized):
            args = (budget.collect(args[0], "str.join()"), *args[1:])
        budget.read(owner, *args, *kwargs.values())
        if estimate is not None:
            _expect(budget, estimate, (owner, *args), kwargs, f"str.{function.__name__}()")
    elif type(function) is types.BuiltinMethodType and isinstance(owner, (list, tuple, Mapping)):
        budget.read(*args, *kwargs.values(), *(() if isinstance(owner, Mapping) else (owner,)))  # d.get(k): O(1)
    elif type(wrapped) is types.BuiltinMethodType and isinstance(wrapped.__self__, str):
        budget.read(wrapped.__self__)
        mapping = kwargs if wrapped.__name__ == "format" else (args[0] if args else {})
        positional = args if wrapped.__name__ == "format" else ()
        _expect(budget, amplifiers.format_method, (wrapped.__self__, positional, mapping), {}, "str.format()")
    elif function is jinja2.utils.generate_lorem_ipsum:
        _expect(budget, amplifiers.lipsum, args, kwargs, "lipsum()")
    elif not isinstance(function, jinja2.runtime.Macro):  # loop.changed(text) compares it, dict(d) copies
        budget.read(*args, *kwargs.values())  # a macro's body is counted instead, as it runs
    return args


def _expect(budget: Budget, estimate: amplifiers.Estimate, args: Any, kwargs: Any, what: str) -> None:
    try:
        size = estimate(*args, **kwargs)
    except (TypeError, ValueError, AttributeError):
        return  # arguments the operation itself refuses: it raises its own error, building nothing
    budget.expect(size, what)


def _budgeted_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (the filter ``name``) estimated before it runs when it can build much more
    than it is given, and measured after. The wrapper keeps Jinja's ``pass_context`` /
    ``pass_environment`` marks, so it is called exactly as the filter was."""
    estimate = amplifiers.FILTERS.get(name)
    skip = 1 if hasattr(function, "jinja_pass_arg") else 0  # a context or an environment comes first
    sized = name in amplifiers.SIZED_VALUE
    factor = _WORK_FACTOR.get(name, 1) if name not in _CONSTANT_TIME else 0
    by_item = name in _BY_ITEM

    @functools.wraps(function)
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        if sized and len(args) > skip and not isinstance(args[skip], Sized):
            args = (*args[:skip], budget.collect(args[skip], f"the {name} filter"), *args[skip + 1 :])
        if estimate is not None:  # first: what a refusal says is more telling
            _expect(budget, estimate, args[skip:], kwargs, f"the {name} filter")
        if factor:
            reading = sum(map(budget.measure, (*args[skip + 1 :], *kwargs.values())))
            budget.step(factor * (reading + _value_work(budget, args[skip:], by_item)))
        budget.step(CALL_STEPS)
        return budget.charge(function(*args, **kwargs), f"the result of the {name} filter")

    return budgeted


def _value_work(budget: Budget, args: tuple[Any, ...], by_item: bool) -> int:
    """The work of reading a filter's value: ``work``, or for a filter that takes a text
    character by character (``join``, ``max``, ``map``), a step per character."""
    if not args:
        return 0
    value = args[0]
    return len(value) if by_item and isinstance(value, (str, bytes)) else budget.measure(value)


# Filters that read nothing but the value's length or one end: the call alone, whatever its size.
_CONSTANT_TIME = frozenset({"length", "count", "first", "last", "default", "d", "attr"})
# Filters that do more than read once: sorting makes about log2(n) comparisons an item (for
# lists of up to a million items); regular expressions take several steps a character.
# Measured: ``title`` takes about 85 ns a character, ``pprint`` 2.7 µs an entry of a mapping.
_REGEX_FILTERS = ("title", "striptags", "urlize", "wordwrap", "wordcount")
_WORK_FACTOR = {
    **dict.fromkeys(("sort", "dictsort", "groupby"), 20),
    **dict.fromkeys(_REGEX_FILTERS, 32),
    **dict.fromkeys(("pprint", "urlencode", "xmlattr"), 16),
}
# Filters that go through their value item by item: a text's characters one at a time.
_BY_ITEM = frozenset(
    {"join", "min", "max", "sum", "unique", "sort", "list", "batch", "slice", "groupby", "random", "map"}
    | {"select", "reject", "selectattr", "rejectattr"}
)
# Tests that look only at their value's type or a number (``is string``, ``is defined``): the
# call alone. Any other (``x is in text``, ``text is lower``) reads its operands.
_CONSTANT_TESTS = frozenset(
    {"defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number", "string"}
    | {"mapping", "iterable", "sequence", "callable", "sameas", "escaped", "filter", "test"}
    | {"odd", "even", "divisibleby"}
)


def _budgeted_test(name: str, test: Any) -> Callable[..., Any]:
    """The test ``name``, spending a call's steps before it runs (``select('odd')`` runs it
    once an item), and the work of reading its operands unless it looks only at a type."""
    reads = name not in _CONSTANT_TESTS

    @functools.wraps(test)
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        budget.step(CALL_STEPS + (sum(map(budget.measure, args)) if reads else 0))
        return test(*args, **kwargs)

    return budgeted
