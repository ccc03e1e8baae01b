"""Compile parsed expressions into Python closures, once per query.

An event is then evaluated by calling closures, with no tree walking and no re-parsing per event.
The common shapes (a field compared with a literal, arithmetic on numbers) take a fast path that
the general value semantics of `values` backs up.
"""

import math
import operator
import time
from typing import NoReturn

from fanout.insights import syntax
from fanout.insights.functions import DATE_FUNCTIONS, FUNCTIONS, PERIOD_CAPS, floor_time
from fanout.insights.lexer import QuerySyntaxError
from fanout.insights.values import INT_RANGE, Timestamp, as_number, as_text, compare

_NUMBER_CLASSES = (int, float)
_ORDER_TESTS = {
    "=": lambda c: c == 0, "!=": lambda c: c != 0, "<": lambda c: c < 0, "<=": lambda c: c <= 0,
    ">": lambda c: c > 0, ">=": lambda c: c >= 0,
}  # fmt: skip
_PYTHON_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                   ">": operator.gt, ">=": operator.ge}  # fmt: skip


def _power(a, b):
    """`^` in floating point, as AWS computes it: 9 ^ 9 ^ 9 must not build a 370-million-digit
    integer. What has no finite real result (overflow, (-8) ^ 0.5, 0 ^ -1) is absent."""
    try:
        return math.pow(a, b)
    except (OverflowError, ValueError):
        return None


def _multiply(a, b):
    """`*` that keeps integers within INT_RANGE (see values), as every other number is."""
    product = a * b
    if product.__class__ is int and product not in INT_RANGE:
        return float(product)
    return product


def _modulo(a, b):
    """Remainder with the sign of the dividend (-7 % 3 is -1), exact for integers."""
    if a.__class__ is int and b.__class__ is int:
        remainder = abs(a) % abs(b)
        return -remainder if a < 0 else remainder
    return math.fmod(a, b)


_UNDEFINED = (ZeroDivisionError, OverflowError, ValueError)
_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": _multiply, "/": operator.truediv,
               "%": _modulo, "^": _power}  # fmt: skip


def truthy(value) -> bool:
    """A filter keeps an event when its condition is present and not false, 0 or empty."""
    if value is None or value is False:
        return False
    if value is True:
        return True
    number = as_number(value)
    return number != 0 if number is not None else value != ""


def _arithmetic(op: str, left, right, constant=None):
    """`constant` is the right operand when it is a number literal.

    Every path turns an undefined result (x / 0, fmod of an infinity) into an absent value; the
    fast paths only skip the conversion of operands that are numbers already.
    """
    apply = _ARITHMETIC[op]

    def slow(a, b):
        a, b = as_number(a), as_number(b)
        if a is None or b is None:
            return None
        try:
            return apply(a, b)
        except _UNDEFINED:
            return None

    if constant.__class__ in _NUMBER_CLASSES and constant != 0:
        # `x / 1000000`: the constant side needs no call and no check per event.
        def by_constant(row):
            a = left(row)
            if a.__class__ is float or a.__class__ is int:
                try:
                    return apply(a, constant)
                except _UNDEFINED:
                    return None
            return slow(a, constant)

        return by_constant

    def evaluate(row):
        a, b = left(row), right(row)
        if (a.__class__ is float or a.__class__ is int) and (b.__class__ is float or b.__class__ is int):
            try:
                return apply(a, b)
            except _UNDEFINED:
                return None
        return slow(a, b)

    return evaluate


def _comparison(op: str, left, right, right_literal):
    test = _ORDER_TESTS[op]
    if isinstance(right_literal, str) and as_number(right_literal) is None and op in ("=", "!="):
        # A non-numeric literal can only equal text: plain string equality is exact for str values.
        equal = op == "="

        def against_text(row):
            value = left(row)
            if value.__class__ is str:
                return (value == right_literal) is equal
            c = compare(value, right_literal)
            return c is not None and test(c)

        return against_text
    if isinstance(right_literal, (int, float)):
        fast = _PYTHON_COMPARE[op]

        def against_number(row):
            value = left(row)
            if value.__class__ is float or value.__class__ is int:
                return fast(value, right_literal)
            c = compare(value, right_literal)
            return c is not None and test(c)

        return against_number

    def general(row):
        c = compare(left(row), right(row))
        return c is not None and test(c)

    return general


class ExpressionCompiler:
    """Turns expression trees into closures `fn(row) -> value`; rejects what it cannot run."""

    def __init__(self, text: str):
        self.text = text

    def error(self, pos: int, token: str, problem: str) -> NoReturn:
        raise QuerySyntaxError(self.text, pos, token, problem)

    def compile(self, node):
        match node:
            case syntax.Literal():
                return self.compile_literal(node)
            case syntax.Field():
                return self.compile_field(node)
            case syntax.Duration():
                return self.compile_duration(node)
            case syntax.Unary():
                return self.compile_unary(node)
            case syntax.Binary():
                return self.compile_binary(node)
            case syntax.InList():
                return self.compile_inlist(node)
            case syntax.Match():
                return self.compile_match(node)
            case syntax.Call():
                return self.compile_call(node)
            case _:
                raise TypeError(f"not an expression node: {node!r}")

    def compile_literal(self, node):
        value = node.value
        return lambda row: value

    def compile_field(self, node):
        return operator.methodcaller("get", node.name)

    def compile_duration(self, node):
        self.error(node.pos, node.text, "a period such as 5m is only allowed in bin(), datefloor() or dateceil()")

    def compile_unary(self, node):
        operand = self.compile(node.operand)
        if node.op == "not":
            return lambda row: not truthy(operand(row))

        def negate(row):
            number = as_number(operand(row))
            return None if number is None else -number

        return negate

    def compile_binary(self, node):
        left, right = self.compile(node.left), self.compile(node.right)
        if node.op == "and":
            return lambda row: truthy(left(row)) and truthy(right(row))
        if node.op == "or":
            return lambda row: truthy(left(row)) or truthy(right(row))
        if node.op in _ORDER_TESTS:
            literal = node.right.value if isinstance(node.right, syntax.Literal) else None
            return _comparison(node.op, left, right, literal)
        constant = node.right.value if isinstance(node.right, syntax.Literal) else None
        return _arithmetic(node.op, left, right, constant)

    def compile_inlist(self, node):
        operand, values, negate = self.compile(node.operand), node.values, node.negate
        texts = frozenset(v for v in values if isinstance(v, str))

        def member(row):
            value = operand(row)
            if value is None:
                return False
            found = value in texts if value.__class__ is str else False
            found = found or any(compare(value, item) == 0 for item in values)
            return found is not negate

        return member

    def compile_match(self, node):
        operand, pattern, negate = self.compile(node.operand), node.pattern, node.negate
        if isinstance(pattern, str):
            test = lambda text: pattern in text  # noqa: E731
        else:
            test = lambda text: pattern.search(text) is not None  # noqa: E731

        def match(row):
            text = as_text(operand(row))
            return text is not None and test(text) is not negate

        return match

    def compile_call(self, node):
        if node.name in syntax.AGGREGATES:
            self.error(node.pos, node.name, "aggregate functions are only allowed in stats")
        if node.name == "bin":
            period = self.period(node, node.args, 1)
            return lambda row: _bin(row.get("@timestamp"), period)
        if node.name == "now":
            if node.args:
                self.error(node.pos, node.name, "takes no arguments")
            started = int(time.time())  # epoch seconds when the query started, the same for every event
            return lambda row: started
        if node.name in DATE_FUNCTIONS:
            period = self.period(node, node.args, 2)
            value, apply = self.compile(node.args[0]), DATE_FUNCTIONS[node.name]
            return lambda row: apply(value(row), period)
        if node.name not in FUNCTIONS:
            self.error(node.pos, node.name, "unknown function (see docs/insights.md for the supported ones)")
        function, least, most = FUNCTIONS[node.name]
        if len(node.args) < least or (most is not None and len(node.args) > most):
            expected = str(least) if least == most else f"{least} or more" if most is None else f"{least}-{most}"
            self.error(node.pos, node.name, f"takes {expected} arguments, got {len(node.args)}")
        args = [self.compile(a) for a in node.args]
        if len(args) == 1:
            only = args[0]
            return lambda row: function(only(row))
        return lambda row: function(*[a(row) for a in args])

    def period(self, node, args, count: int):
        """(amount, unit) of the period argument, capped as the datetime functions page says:
        `bin(300s)` runs as `bin(60s)` (PERIOD_CAPS)."""
        if len(args) != count or not isinstance(args[-1], syntax.Duration):
            self.error(node.pos, node.name, "expects a period such as 5m as its last argument")
        amount, unit = args[-1].amount, args[-1].unit
        return min(amount, PERIOD_CAPS.get(unit, amount)), unit


def _bin(timestamp, period):
    return None if timestamp is None else Timestamp(floor_time(int(timestamp), *period))


def referenced_fields(node) -> set:
    """Names of the fields an expression reads (bin(), earliest() and latest() read @timestamp)."""
    return {name for name, _ in field_uses(node)}


def field_uses(node):
    """(name, position) of every field an expression reads."""
    if isinstance(node, syntax.Field):
        yield node.name, node.pos
    if isinstance(node, syntax.Call) and node.name in ("bin", "earliest", "latest"):
        yield "@timestamp", node.pos
    for child in syntax.children(node):
        yield from field_uses(child)
