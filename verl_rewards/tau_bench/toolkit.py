"""What every tau-bench v1 tool shares: the toolkit base, argument checking, and the three common tools.

A v1 tool (``tau_bench/envs/<domain>/tools/*.py``) is a static ``invoke(data, **kwargs) -> str`` that *returns* its
failures as ``"Error: <lower-case text>"`` strings and works on the raw JSON data, with no validation or coercion of
its arguments. Our tools are methods of a :class:`TauBenchToolkit` (the engine's
:class:`~verl_rewards.engine.toolkit.Toolkit`, so environments, replay and the verl adapters are shared with tau2)
over the copy-on-write :class:`~verl_rewards.engine.state.DBState`: they read with ``db.get`` and mutate only what
``db.write`` hands out, in the same order as tau-bench, so a call that raises half-way leaves the same partial
change behind. Arguments reach them exactly as the model wrote them.

tau-bench turns any exception into ``"Error: " + str(exception)``. Python's own messages for a call with wrong
parameter names name the tool class (``GetUserDetails.invoke() missing 1 required positional argument:
'user_id'``); :meth:`TauBenchToolkit.call` produces the same texts before calling.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
import operator
import warnings
from typing import Any

from ..engine.toolkit import GENERIC, Toolkit, tool

_MISSING = object()
TRANSFER_OBSERVATION = "Transfer successful"
CALCULATOR_CHARS = frozenset("0123456789+-*/(). ")
MAX_INT_BITS = 1 << 16
"""Our bound on an integer inside ``calculate`` (tau-bench has none and can hang on ``9**9**9``)."""


def class_name(tool_name: str) -> str:
    """tau-bench's class name of a tool (``get_user_details`` -> ``GetUserDetails``)."""
    return "".join(part.capitalize() for part in tool_name.split("_"))


def _names(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


class TauBenchToolkit(Toolkit):
    """Base of a v1 domain's tools. ``DOMAIN`` names the domain (it appears in one of Python's messages)."""

    DOMAIN = ""

    def record_json(self, collection: str, key: Any, *, missing: str) -> str:
        """A record as tau-bench prints it, or tau-bench's error text when there is none under ``key``."""
        return dumps(self.at(collection, key)) if self.has(collection, key) else f"Error: {missing}"

    def argument_error(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The ``TypeError`` text Python raises when tau-bench calls ``invoke(data=..., **arguments)``, or None."""
        qualname = f"{class_name(name)}.invoke"
        params = [p for p in inspect.signature(getattr(self, name)).parameters]
        if "data" in arguments:  # raised while building the call, with the module path in front
            where = f"tau_bench.envs.{self.DOMAIN}.tools.{name}.{qualname}"
            return f"{where}() got multiple values for keyword argument 'data'"
        for key in arguments:
            if key not in params:
                return f"{qualname}() got an unexpected keyword argument {key!r}"
        missing = [p for p in params if p not in arguments]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return f"{qualname}() missing {len(missing)} required positional argument{plural}: {_names(missing)}"
        return None

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``name`` with keyword ``arguments`` (TypeError with tau-bench's text for wrong names)."""
        if name not in self.tool_specs():
            raise KeyError(name)
        problem = self.argument_error(name, arguments)
        if problem is not None:
            raise TypeError(problem)
        return getattr(self, name)(**arguments)

    # ------------------------------------------------------------------------------- helpers for tools
    def at(self, collection: str, key: Any) -> Any:
        """``data[collection][key]`` (read-only): KeyError when absent, TypeError for an unhashable key."""
        record = self.db.get(collection, key, _MISSING)
        if record is _MISSING:
            raise KeyError(key)
        return record

    def has(self, collection: str, key: Any) -> bool:
        """``key in data[collection]``."""
        return self.db.contains(collection, key)

    # ------------------------------------------------------------------------------- the common tools
    @tool(GENERIC)
    def calculate(self, expression: Any) -> str:
        """Arithmetic on numbers with + - * / ( ) and spaces; the result rounded to 2 decimals."""
        if not all(char in CALCULATOR_CHARS for char in expression):
            return "Error: invalid characters in expression"
        try:
            return str(round(float(evaluate_arithmetic(expression)), 2))
        except Exception as exc:  # noqa: BLE001 - tau-bench reports every failure this way
            return f"Error: {exc}"

    @tool(GENERIC)
    def think(self, thought: Any) -> str:
        """A note to self: no effect, empty observation."""
        return ""

    @tool(GENERIC)
    def transfer_to_human_agents(self, summary: Any) -> str:
        """Hand the conversation to a human agent; ends the episode."""
        return TRANSFER_OBSERVATION


# --------------------------------------------------------------------------------------- calculate
_BINARY: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Any] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class CalculationTooLarge(ArithmeticError):
    """An integer in ``calculate`` grew beyond :data:`MAX_INT_BITS` bits."""


def _checked(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculationTooLarge(f"integer larger than 2**{MAX_INT_BITS}")
    return value


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if exponent * math.log2(abs(base)) > MAX_INT_BITS:
            raise CalculationTooLarge(f"integer larger than 2**{MAX_INT_BITS}")
    return base**exponent


def _eval_node(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _eval_node(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow):
            return _checked(_power(left, right))
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand))
    if isinstance(node, ast.Tuple):
        return tuple(_eval_node(e) for e in node.elts)
    if isinstance(node, ast.Starred):
        return _eval_node(node.value)
    if isinstance(node, ast.Call):  # "(1)(2)": numbers are never callable
        func = _eval_node(node.func)
        for arg in node.args:
            _eval_node(arg)
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    raise SyntaxError(f"unsupported expression: {type(node).__name__}")


def evaluate_arithmetic(expression: str) -> Any:
    """The value Python's ``eval`` gives an expression made of digits, ``+-*/().`` and spaces, without eval.

    The text is parsed (never executed) and the tree walked with Python's own operators, so results and error
    messages match ``eval``; integers are bounded by :data:`MAX_INT_BITS` so no expression can hang.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "(1)(2)" draws a SyntaxWarning while parsing
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
    return _eval_node(tree)


def dumps(value: Any) -> str:
    """A tool's success output: ``json.dumps`` with default settings (file key order, native numbers)."""
    return json.dumps(value)


__all__ = [
    "TRANSFER_OBSERVATION",
    "TauBenchToolkit",
    "class_name",
    "dumps",
    "evaluate_arithmetic",
]
