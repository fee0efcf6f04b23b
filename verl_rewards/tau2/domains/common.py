"""Tools shared by several tau2 domains: the safe calculator and the human-transfer message.

tau2 evaluates ``calculate`` with Python's ``eval`` after a character filter. We never call ``eval``: a small
tokenizer and parser for exactly the language the filter lets through (numbers, ``+ - * / // **``, parentheses
and spaces) compile the expression to postfix code, which a stack machine runs with Python's own number
operators. Results, and the messages of Python's tokenizer errors and runtime errors, therefore match what
tau2 prints for every input we accept.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from ...engine.toolkit import ToolError

TRANSFER_MESSAGE = "Transfer successful"
"""What ``transfer_to_human_agents`` returns in every tau2 domain."""

ALLOWED_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_EXPRESSION_LENGTH = 10_000
"""Longest expression we evaluate (tau2 has no bound; ours keeps a bad call cheap)."""

_MAX_NESTING = 200  # CPython's tokenizer refuses deeper parentheses
_MAX_INT_BITS = 100_000  # refuse integer results that would take long to compute (2**10**9 and friends)

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(\*\*|//|[-+*/()]))")
_LEADING_ZEROS = "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"


def _syntax_error(message: str, line: int = 1) -> ToolError:
    return ToolError(f"{message} (<string>, line {line})")


def _tokenize(expression: str) -> tuple[list[tuple[str, Any]], bool]:
    """Split into ("num", value) and ("op", symbol) tokens; also tell whether a "(" is left open.

    Raises CPython's hard tokenizer errors (leading zeros, unmatched ")", nesting depth), which CPython reports
    in preference to any parser error, first one first.
    """
    tokens: list[tuple[str, Any]] = []
    depth = 0
    pos = 0
    end = len(expression.rstrip(" "))
    while pos < end:
        match = _TOKEN.match(expression, pos)
        if match is None:  # a lone "." (the character filter leaves nothing else unmatched)
            tokens.append(("bad", expression[pos:].strip()[:1]))
            pos = expression.index(".", pos) + 1
            continue
        pos = match.end()
        number, symbol = match.group(1), match.group(2)
        if number is not None:
            if "." in number:
                tokens.append(("num", float(number)))
            else:
                if len(number) > 1 and number[0] == "0" and number.strip("0"):
                    raise _syntax_error(_LEADING_ZEROS)
                tokens.append(("num", int(number)))
            continue
        if symbol == "(":
            depth += 1
            if depth > _MAX_NESTING:
                raise _syntax_error("too many nested parentheses")
        elif symbol == ")":
            if depth == 0:
                raise _syntax_error("unmatched ')'")
            depth -= 1
        tokens.append(("op", symbol))
    return tokens, depth > 0


# Binary operators by precedence (all left-associative); ** is handled with the unary operators.
_BINARY: dict[str, tuple[int, Callable[[Any, Any], Any]]] = {
    "+": (1, operator.add),
    "-": (1, operator.sub),
    "*": (2, operator.mul),
    "/": (2, operator.truediv),
    "//": (2, operator.floordiv),
}


class _Compiler:
    """Recursive-descent parser that emits postfix code in Python's evaluation order.

    Grammar (Python's, restricted to the allowed characters)::

        expr    := factor (binop factor)*            # + - (1) < * / // (2), left-associative
        factor  := ('+' | '-')* primary ('**' ('+' | '-')* primary)*   # ** binds right, tighter than unary on its left
        primary := atom ('(' [expr] ')')*            # a "call" of a number is legal syntax, a TypeError at run time
        atom    := NUMBER | '(' expr ')' | '(' ')'
    """

    def __init__(self, tokens: list[tuple[str, Any]], unclosed: bool):
        self.tokens = tokens
        self.unclosed = unclosed
        self.pos = 0
        self.code: list[tuple[str, Any]] = []

    def _peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _fail(self) -> ToolError:
        # CPython names the open parenthesis only when parsing ran into the end of the input
        if self.unclosed and self.pos >= len(self.tokens):
            return _syntax_error("'(' was never closed")
        return _syntax_error("invalid syntax")

    def _is_op(self, symbol: str) -> bool:
        tok = self._peek()
        return tok is not None and tok[0] == "op" and tok[1] == symbol

    def compile(self) -> list[tuple[str, Any]]:
        if not self.tokens:
            raise _syntax_error("invalid syntax", line=0)
        self._expr()
        if self.pos != len(self.tokens):
            raise self._fail()
        return self.code

    def _expr(self) -> None:
        pending: list[str] = []  # shunting-yard operator stack
        self._factor()
        while True:
            tok = self._peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY:
                break
            self.pos += 1
            prec = _BINARY[tok[1]][0]
            while pending and _BINARY[pending[-1]][0] >= prec:
                self.code.append(("bin", pending.pop()))
            pending.append(tok[1])
            self._factor()
        while pending:
            self.code.append(("bin", pending.pop()))

    def _prefixes(self) -> list[str]:
        signs: list[str] = []
        while self._is_op("+") or self._is_op("-"):
            signs.append(self.tokens[self.pos][1])
            self.pos += 1
        return signs

    def _factor(self) -> None:
        prefixes = [self._prefixes()]
        self._primary()
        while self._is_op("**"):
            self.pos += 1
            prefixes.append(self._prefixes())
            self._primary()
        # operands are on the stack left to right; fold from the right: p_i(x_i ** rest)
        for i in range(len(prefixes) - 1, -1, -1):
            for sign in reversed(prefixes[i]):
                self.code.append(("unary", sign))
            if i > 0:
                self.code.append(("bin", "**"))

    def _primary(self) -> None:
        self._atom()
        while self._is_op("("):
            self.pos += 1
            if self._is_op(")"):
                self.pos += 1
                self.code.append(("call", 0))
                continue
            self._expr()
            if not self._is_op(")"):
                raise self._fail()
            self.pos += 1
            self.code.append(("call", 1))

    def _atom(self) -> None:
        tok = self._peek()
        if tok is None:
            raise self._fail()
        if tok[0] == "num":
            self.pos += 1
            self.code.append(("push", tok[1]))
            return
        if tok[0] == "op" and tok[1] == "(":
            self.pos += 1
            if self._is_op(")"):
                self.pos += 1
                self.code.append(("push", ()))
                return
            self._expr()
            if not self._is_op(")"):
                raise self._fail()
            self.pos += 1
            return
        raise self._fail()


def _too_big() -> ToolError:
    return ToolError("int too large to convert to float")


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if exponent * abs(base).bit_length() > _MAX_INT_BITS:
            raise _too_big()
    return operator.pow(base, exponent)


def _run(code: list[tuple[str, Any]]) -> Any:
    stack: list[Any] = []
    for kind, arg in code:
        if kind == "push":
            stack.append(arg)
        elif kind == "unary":
            value = stack.pop()
            stack.append(operator.neg(value) if arg == "-" else operator.pos(value))
        elif kind == "bin":
            right = stack.pop()
            left = stack.pop()
            if arg == "**":
                stack.append(_power(left, right))
                continue
            if (
                arg == "*"
                and isinstance(left, int)
                and isinstance(right, int)
                and abs(left).bit_length() + abs(right).bit_length() > _MAX_INT_BITS
            ):
                raise _too_big()
            stack.append(_BINARY[arg][1](left, right))
        else:  # call: Python evaluates callee and argument, then fails to call a number
            if arg:
                stack.pop()
            callee = stack.pop()
            raise TypeError(f"'{type(callee).__name__}' object is not callable")
    return stack.pop()


def calculate_expression(expression: str) -> str:
    """Evaluate an arithmetic expression like tau2's ``calculate``: ``str(round(float(value), 2))``.

    Raises :class:`ToolError` with tau2's message for characters outside ``0123456789+-*/(). ``, with CPython's
    message for syntax and arithmetic errors, and with "Expression too long" beyond
    :data:`MAX_EXPRESSION_LENGTH` characters.
    """
    try:
        if not all(char in ALLOWED_CHARACTERS for char in expression):
            raise ToolError("Invalid characters in expression")
    except TypeError as exc:  # e.g. a number instead of a string: tau2 fails the same way
        raise ToolError(str(exc)) from None
    if not isinstance(expression, str):
        raise ToolError("eval() arg 1 must be a string, bytes or code object")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ToolError("Expression too long")
    code = _Compiler(*_tokenize(expression)).compile()
    try:
        return str(round(float(_run(code)), 2))
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ToolError(str(exc)) from None
