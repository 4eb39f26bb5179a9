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
- filters, tests and calls spend steps for each call and for what they read
  (``codec.render.costs``), comparisons for what they read (``budget_read``);
- the output, and every macro's or block's output, is counted as it is joined
  (``Environment.concat``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jinja2
import jinja2.compiler
import jinja2.nodes
import jinja2.runtime
from jinja2.sandbox import ImmutableSandboxedEnvironment

from codec.render import amplifiers, costs
from codec.render.budget import Counted, current, text_size
from codec.render.sizes import CHARS_PER_STEP


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
_CONTEXT_KEYWORDS = frozenset({"_loop_vars", "_block_vars"})
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
            self.filters[name] = costs.budgeted_filter(name, function)
        for name, test in self.tests.items():
            self.tests[name] = costs.budgeted_test(name, test)

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
        # Jinja passes a loop's or a block's variables along to every call made in its body, for
        # callees that take the context; they are no argument of the callee's, to estimate or read.
        given = {name: value for name, value in kwargs.items() if name not in _CONTEXT_KEYWORDS}
        args = costs.estimated_call(budget, __obj, args, given)
        if isinstance(__obj, jinja2.runtime.LoopContext) and args:  # a recursive loop's `loop(children)`
            args = (Counted(args[0], budget), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(__obj, jinja2.runtime.Macro):
            return result
        return budget.charge(result, f"the result of {getattr(__obj, '__name__', 'a call')}()")
