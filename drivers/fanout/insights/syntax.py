"""Parse query text into commands and expressions (the tree the evaluator compiles).

A recursive-descent parser, written by hand because no library parses this language. It accepts
the subset documented in docs/insights.md and rejects everything else with the position and the
token, so that a query is never silently run with a part of it ignored.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple, NoReturn

from fanout.insights.lexer import Lexer, QuerySyntaxError, Token

# Expressions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    value: object
    pos: int


@dataclass(frozen=True)
class Field:
    name: str
    pos: int


@dataclass(frozen=True)
class Duration:
    amount: int
    unit: str
    pos: int
    text: str


@dataclass(frozen=True)
class Call:
    name: str  # lower case
    args: tuple
    pos: int
    text: str  # source text, the column name when there is no alias


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "not"
    operand: object
    pos: int


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / % ^ = != < <= > >= and or
    left: object
    right: object
    pos: int


@dataclass(frozen=True)
class InList:
    operand: object
    values: tuple
    negate: bool
    pos: int


@dataclass(frozen=True)
class Match:
    """`like "text"` (substring), `like /re/` and `=~ /re/` (regex search)."""

    operand: object
    pattern: object  # str for a substring, compiled re.Pattern for a regex
    negate: bool
    pos: int


# Commands ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fields:
    items: tuple  # (expr, output name)
    pos: int


@dataclass(frozen=True)
class Display:
    items: tuple  # (expr, output name), as in fields: the docs use expressions and `as` here too
    pos: int


@dataclass(frozen=True)
class Filter:
    condition: object
    pos: int


@dataclass(frozen=True)
class Parse:
    source: object  # expression whose text is parsed (default @message)
    mode: str  # one of PARSE_MODES
    pattern: re.Pattern | None  # glob and regex modes
    names: tuple  # the fields set; in logfmt mode the one alias whose keys become alias.key
    groups: tuple  # glob and regex modes: the pattern group of each name
    multi: bool  # regex mode: one row per match
    pos: int


@dataclass(frozen=True)
class Stats:
    items: tuple  # (expression over aggregate calls and earlier items' names, output name)
    groups: tuple  # (expr, output name)
    pos: int


class SortKey(NamedTuple):
    name: str
    descending: bool
    written: bool  # whether the query says asc or desc (the saved queries always do)


@dataclass(frozen=True)
class Sort:
    keys: tuple  # SortKey
    pos: int


@dataclass(frozen=True)
class Limit:
    count: int
    pos: int


@dataclass(frozen=True)
class Dedup:
    names: tuple
    pos: int


@dataclass
class Query:
    text: str
    commands: list = field(default_factory=list)


AGGREGATES = {
    "count": (0, 1), "count_distinct": (1, 1), "sum": (1, 1), "avg": (1, 1), "min": (1, 1),
    "max": (1, 1), "stddev": (1, 1), "pct": (2, 2), "percentile": (2, 2), "earliest": (1, 1),
    "latest": (1, 1), "sortsfirst": (1, 1), "sortslast": (1, 1),
}  # fmt: skip
# Commands of Logs Insights that need AWS's machine-learning models: they cannot run offline.
ML_COMMANDS = ("pattern", "anomaly")
# Commands of the syntax page (and PPL's) that the local evaluator does not implement.
UNSUPPORTED_COMMANDS = ("unmask", "diff", "unnest", "lookup", "filterindex", "source", "join", "json", "addtotals",
                        "relevantfields", "expand", "autoregress", "logcompare", "filldown", "fillmissing",
                        "cidrlookup", "outlier", "accum", "appendcols", "sessionize", "countfrequent", "eval", "head",
                        "rename")  # fmt: skip
PARSE_MODES = ("glob", "regex", "logfmt", "csv")
_WORD_MODES = PARSE_MODES[2:]  # the modes named by a word after the field
MAX_LIMIT = 10_000
_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")
_COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]+)?)\)")


def scope_inline_flags(pattern: str) -> str:
    """`pattern` with each inline flag group such as `(?i)` after the very start scoped to what it
    governs in AWS's engine, the rest of its group, alternatives included: `^(?i)ab|c` becomes
    `^(?i:ab)|(?i:c)`. Python accepts unscoped flags only at the start, and no library translates
    them, hence this scanner (escapes and character classes are copied as they are).
    """
    out: list[str] = []
    scopes: list[list[str]] = [[]]  # per open group, the flags opened in it so far
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            first = i + 1 + pattern.startswith("^", i + 1)
            if pattern.startswith("]", first):  # a ] right after [ or [^ is a literal
                out.append(pattern[i : first + 1])
                i = first + 1
                continue
        elif i > 0 and (flags := _INLINE_FLAGS.match(pattern, i)):
            out.append(f"(?{flags.group(1)}:")
            scopes[-1].append(flags.group(1))
            i = flags.end()
            continue
        elif char == "(":
            scopes.append([])
        elif char == ")" and len(scopes) > 1:
            out.append(")" * len(scopes.pop()))
        elif char == "|" and scopes[-1]:
            opened = scopes[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened))
            i += 1
            continue
        out.append(char)
        i += 1
    out.append(")" * len(scopes[0]))
    return "".join(out)


def compile_regex(lexer: Lexer, token: Token) -> re.Pattern:
    """A Python pattern for an Insights regex: `(?<name>...)` becomes `(?P<name>...)` and inline
    flags after the start are scoped (see scope_inline_flags)."""
    try:
        return re.compile(scope_inline_flags(_NAMED_GROUP.sub("(?P<", token.value)))
    except re.error as exc:
        lexer.error(token.pos, f"invalid regular expression: {exc}", token.text)


def glob_pattern(text: str) -> re.Pattern:
    """The regex of a parse glob: each `*` captures, in order.

    A `*` followed by literal text takes the shortest match (up to the first occurrence of that
    text), a trailing `*` the rest of the value. AWS does not document this; it is what makes
    `"k": "*"` stop at the value's closing quote.
    """
    parts = text.split("*")
    groups = ["(.*?)"] * (len(parts) - 2) + ["(.*)" if parts[-1] == "" else "(.*?)"]
    body = "".join(re.escape(part) + group for part, group in zip(parts, groups + [""]))
    return re.compile(body, re.DOTALL)


class Parser:
    def __init__(self, text: str):
        self.lexer = Lexer(text)
        self.text = text
        self.token = self.lexer.token_at(0)
        self.previous_end = 0
        self.output_names: set[str] = set()  # names a fields or stats command has given so far

    # -- token plumbing --
    def advance(self) -> Token:
        current = self.token
        self.previous_end = current.pos + len(current.text)
        self.token = self.lexer.token_at(self.previous_end)
        return current

    def error(self, problem: str, token: Token | None = None) -> NoReturn:
        token = token or self.token
        raise QuerySyntaxError(self.text, token.pos, token.text, problem)

    def is_op(self, *ops: str) -> bool:
        return self.token.kind == "OP" and self.token.value in ops

    def expect_op(self, op: str) -> Token:
        if not self.is_op(op):
            self.error(f"expected {op!r}")
        return self.advance()

    def accept_word(self, *words: str) -> bool:
        if self.token.is_word(*words):
            self.advance()
            return True
        return False

    def name(self, what: str = "a field name") -> str:
        if self.token.kind in ("NAME", "FIELD"):
            return self.advance().value
        self.error(f"expected {what}")

    def regex(self) -> re.Pattern:
        if self.is_op("/"):
            self.token = self.lexer.regex_at(self.token.pos)
        if self.token.kind != "REGEX":
            self.error("expected a /regular expression/")
        return compile_regex(self.lexer, self.advance())

    def source_text(self, start: int) -> str:
        """Normalised source text from `start` to the end of the last consumed token."""
        end = self.previous_end
        return " ".join(self.text[start:end].split())

    # -- query --
    def query(self) -> Query:
        query = Query(self.text)
        if self.token.kind == "END":
            self.error("empty query")
        while True:
            query.commands.append(self.command())
            if self.token.kind == "END":
                return query
            self.expect_op("|")

    def command(self):
        token = self.token
        if token.kind != "NAME":
            self.error("expected a command (fields, filter, parse, stats, sort, limit, display, dedup)")
        word = token.value.lower()
        handler = _COMMANDS.get(word)
        if handler is None:
            if word in ML_COMMANDS:
                self.error("is a machine-learning command of Logs Insights: not available offline")
            self.error("is not supported by the local evaluator" if word in UNSUPPORTED_COMMANDS else "unknown command")
        self.advance()
        self.output_names = set()  # duplicate names are checked within one command
        return handler(self, token.pos)

    def comma_list(self, item):
        items = [item()]
        while self.is_op(","):
            self.advance()
            items.append(item())
        return tuple(items)

    def command_fields(self, pos):
        return Fields(self.comma_list(self.named_expression), pos)

    def command_display(self, pos):
        return Display(self.comma_list(self.named_expression), pos)

    def command_filter(self, pos):
        return Filter(self.expression(), pos)

    def command_dedup(self, pos):
        return Dedup(self.comma_list(self.name), pos)

    def command_limit(self, pos):
        token = self.token
        if token.kind != "NUMBER" or not isinstance(token.value, int) or not 1 <= token.value <= MAX_LIMIT:
            self.error(f"limit takes a whole number from 1 to {MAX_LIMIT}")
        self.advance()
        return Limit(token.value, pos)

    def command_sort(self, pos):
        def key():
            name = self.name()
            if self.token.is_word("asc", "desc"):
                return SortKey(name, self.advance().value.lower() == "desc", True)
            return SortKey(name, True, False)  # Logs Insights sorts descending by default

        after = self.lexer.token_at(self.token.pos + len(self.token.text))
        if self.token.is_word("by") and after.kind in ("NAME", "FIELD") and not after.is_word("asc", "desc"):
            self.advance()  # `sort by f`, as the Lambda operator guide writes it
        return Sort(self.comma_list(key), pos)

    def command_parse(self, pos):
        """`parse [field] "glob" as a, b`, `parse [field] /regex/ [as a, b] [multi]`,
        `parse [field] logfmt as alias` or `parse [field] csv as a, b` (field: @message)."""
        source = Field("@message", pos)
        after = self.lexer.token_at(self.token.pos + len(self.token.text))
        mode_first = self.token.is_word(*_WORD_MODES) and after.is_word("as")  # `parse logfmt as lf`
        if not (self.token.kind in ("STRING", "REGEX") or self.is_op("/") or mode_first):
            source = self.primary()
        if self.token.is_word(*_WORD_MODES):
            mode = self.advance().value.lower()
            self.expect_as()
            names = (self.name(),) if mode == "logfmt" else self.comma_list(self.name)
            return Parse(source, mode, None, names, (), False, pos)
        if self.token.kind == "NAME":
            self.error(f"is not a parse mode: write a \"glob\", a /regex/ or one of {', '.join(_WORD_MODES)}")
        if self.token.kind == "STRING":
            glob = self.advance()
            if "*" not in glob.value:
                self.error("a parse pattern needs at least one * to capture", glob)
            self.expect_as()
            return self.parse_groups(source, "glob", glob_pattern(glob.value), glob, self.comma_list(self.name), pos)
        start = self.token.pos
        pattern = self.regex()
        written = self.text[start : self.previous_end]
        if self.accept_word("as"):
            at = Token("REGEX", written, start, written)
            command = self.parse_groups(source, "regex", pattern, at, self.comma_list(self.name), pos)
        elif pattern.groupindex:
            names = tuple(pattern.groupindex)
            command = Parse(source, "regex", pattern, names, tuple(pattern.groupindex.values()), False, pos)
        else:
            self.error("a parse regex needs named groups such as (?<name>...), or 'as' and names")
        return replace(command, multi=True) if self.accept_word("multi") else command

    def expect_as(self):
        if not self.accept_word("as"):
            self.error("expected 'as' and the names of the extracted fields")

    def parse_groups(self, source, mode: str, pattern: re.Pattern, at: Token, names: tuple, pos: int) -> Parse:
        """A glob or regex parse whose groups, in order, are given the names after 'as'."""
        what = "*" if mode == "glob" else "groups"
        if len(names) != pattern.groups:
            self.error(f"the pattern has {pattern.groups} {what} but {len(names)} names follow", at)
        return Parse(source, mode, pattern, names, tuple(range(1, len(names) + 1)), False, pos)

    def command_stats(self, pos):
        items = self.comma_list(self.stats_item)
        groups = ()
        if self.accept_word("by"):
            groups = self.comma_list(self.named_expression)
        return Stats(items, groups, pos)

    def stats_item(self):
        """An aggregate, or an expression over aggregates and the names of earlier items of the
        same stats (`sum(x) / count(*)`, `max(a) - min(a) as spread`, `hi - lo as gap`)."""
        start = self.token
        expr = self.expression()
        calls = list(aggregate_calls(expr))
        if not calls and isinstance(expr, Call):
            self.error("is not an aggregate function (such as count(*) or pct(f, 50))", start)
        for call in calls:
            for inner in call.args:
                for nested in aggregate_calls(inner):
                    self.error("an aggregate function cannot take another one as its argument",
                               Token("NAME", nested.name, nested.pos, nested.name))
        outside = list(fields_outside_aggregates(expr))
        for name, at in outside:
            if name not in self.output_names:
                self.error(f"{name!r} is outside an aggregate function: a stats item may only use "
                           "aggregates and the names of earlier items of the same stats",
                           Token("NAME", name, at, name))
        if not calls and not outside:
            self.error("each stats item needs an aggregate function such as count(*) or pct(f, 50)", start)
        default = expr.text if isinstance(expr, Call) else self.source_text(start.pos)
        return expr, self.alias(default, start)

    def named_expression(self):
        start = self.token
        expr = self.expression()
        default = expr.name if isinstance(expr, Field) else self.source_text(start.pos)
        return expr, self.alias(default, start)

    def alias(self, default: str, start: Token) -> str:
        """The output name of an item (`as` or `default`); the command's names must be distinct,
        or one column would silently overwrite another."""
        where, name = start, default
        if self.accept_word("as"):
            where = self.token
            name = self.name("a name after 'as'")
        if name in self.output_names:
            self.error(f"{name!r} is already a column of this command; choose another name with 'as'", where)
        self.output_names.add(name)
        return name

    # -- expressions, loosest binding first --
    def expression(self):
        left = self.conjunction()
        while self.token.is_word("or"):
            pos = self.advance().pos
            left = Binary("or", left, self.conjunction(), pos)
        return left

    def conjunction(self):
        left = self.negation()
        while self.token.is_word("and"):
            pos = self.advance().pos
            left = Binary("and", left, self.negation(), pos)
        return left

    def negation(self):
        if self.token.is_word("not"):
            pos = self.advance().pos
            return Unary("not", self.negation(), pos)
        return self.comparison()

    def comparison(self):
        left = self.additive()
        token = self.token
        if self.is_op(*_COMPARISONS, "=="):  # `==`: the Lambda operator guide's spelling of `=`
            self.advance()
            return Binary("=" if token.value == "==" else token.value, left, self.additive(), token.pos)
        if self.is_op("=~"):
            self.advance()
            return Match(left, self.regex(), False, token.pos)
        negate = self.accept_word("not")
        if self.accept_word("in"):
            return InList(left, self.list_literal(), negate, token.pos)
        if self.accept_word("like"):
            if self.token.kind == "STRING":
                return Match(left, self.advance().value, negate, token.pos)
            return Match(left, self.regex(), negate, token.pos)
        if negate:
            self.error("expected 'in' or 'like' after 'not'")
        return left

    def list_literal(self) -> tuple:
        self.expect_op("[")
        values = self.comma_list(self.literal_value)
        self.expect_op("]")
        return values

    def literal_value(self):
        sign = 1
        if self.is_op("-"):
            self.advance()
            sign = -1
        if self.token.kind == "NUMBER":
            return sign * self.advance().value
        if self.token.kind == "STRING" and sign == 1:
            return self.advance().value
        self.error("expected a string or a number in the list")

    def binary_level(self, operators, operand):
        left = operand()
        while self.is_op(*operators):
            token = self.advance()
            left = Binary(token.value, left, operand(), token.pos)
        return left

    def additive(self):
        return self.binary_level(("+", "-"), self.multiplicative)

    def multiplicative(self):
        return self.binary_level(("*", "/", "%"), self.unary)

    def unary(self):
        """A leading minus applies to a whole power, as in mathematics: -2 ^ 2 is -(2 ^ 2)."""
        if self.is_op("-"):
            pos = self.advance().pos
            operand = self.unary()
            if isinstance(operand, Literal) and isinstance(operand.value, (int, float)):
                return Literal(-operand.value, pos)
            return Unary("-", operand, pos)
        return self.power()

    def power(self):
        base = self.primary()
        if self.is_op("^"):
            token = self.advance()
            return Binary("^", base, self.unary(), token.pos)  # right associative; 2 ^ -1 is 0.5
        return base

    def primary(self):
        token = self.token
        if token.kind in ("NUMBER", "STRING"):
            self.advance()
            return Literal(token.value, token.pos)
        if token.kind == "DURATION":
            self.advance()
            amount, unit = token.value
            return Duration(amount, unit, token.pos, token.text)
        if token.kind == "FIELD":
            self.advance()
            return Field(token.value, token.pos)
        if self.is_op("("):
            self.advance()
            inner = self.expression()
            self.expect_op(")")
            return inner
        if token.kind == "NAME":
            self.advance()
            if self.is_op("("):
                return self.call(token)
            return Field(token.value, token.pos)
        self.error("expected a value, a field or a function call")

    def call(self, name: Token) -> Call:
        self.expect_op("(")
        args = []
        if self.is_op("*"):
            star = self.advance()
            if name.value.lower() != "count":
                self.error("only count(*) takes *", star)
        elif not self.is_op(")"):
            args = list(self.comma_list(self.expression))
        self.expect_op(")")
        return Call(name.value.lower(), tuple(args), name.pos, self.source_text(name.pos))


# Each command word and the Parser method that parses the rest of the command.
_COMMANDS: dict[str, Callable[[Parser, int], object]] = {
    "fields": Parser.command_fields,
    "display": Parser.command_display,
    "filter": Parser.command_filter,
    "where": Parser.command_filter,  # "a grammar alias for the filter command" (CWL_QuerySyntax-Where)
    "dedup": Parser.command_dedup,
    "limit": Parser.command_limit,
    "sort": Parser.command_sort,
    "parse": Parser.command_parse,
    "stats": Parser.command_stats,
}


def children(node) -> tuple:
    """The expressions directly inside an expression."""
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, (Unary, InList, Match)):
        return (node.operand,)
    return ()


def aggregate_calls(node):
    """The outermost aggregate calls of an expression."""
    if isinstance(node, Call) and node.name in AGGREGATES:
        yield node
        return
    for child in children(node):
        yield from aggregate_calls(child)


def fields_outside_aggregates(node):
    """(name, position) of the fields an expression reads outside its aggregate calls."""
    if isinstance(node, Field):
        yield node.name, node.pos
    elif not (isinstance(node, Call) and node.name in AGGREGATES):
        for child in children(node):
            yield from fields_outside_aggregates(child)


def parse(text: str) -> Query:
    """The parsed query; raises QuerySyntaxError naming the line, column and token at fault."""
    return Parser(text).query()
