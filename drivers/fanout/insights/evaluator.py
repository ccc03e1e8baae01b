"""Run a Logs Insights query over log events locally, answering in GetQueryResults' shape.

The query is parsed and compiled once into a plan of stages. Consecutive per-event commands
(parse, fields, filter) are fused into one function per event; stats, sort, limit and dedup work
on the rows that reach them. The answer is the GetQueryResults response shape (every value a
string), so the same reader handles AWS and local results.
"""

import dataclasses
import functools
import operator
from collections.abc import Iterable
from itertools import islice
from typing import NoReturn

from fanout.insights import syntax
from fanout.insights.aggregates import Column, finisher
from fanout.insights.compiler import ExpressionCompiler, field_uses, referenced_fields, truthy
from fanout.insights.discovery import SYSTEM_FIELDS, row_builder
from fanout.insights.extract import extractor
from fanout.insights.lexer import QuerySyntaxError
from fanout.insights.values import as_text, render, sort_key

DEFAULT_COLUMNS = ("@timestamp", "@message")
MAX_STATS = 2
_COUNTED = (None,)
_BOOLEAN_NODES = (syntax.InList, syntax.Match)


def _values_of(compiler: ExpressionCompiler, nodes: list):
    """fn(row) -> tuple of the nodes' values. Plain fields, the usual stats arguments and groups,
    are read by one itemgetter call (C) rather than one Python call each: this runs per event."""
    if len(nodes) > 1 and all(isinstance(node, syntax.Field) for node in nodes):
        names = tuple(node.name for node in nodes)
        read_all = operator.itemgetter(*names)

        def fields(row):
            try:
                return read_all(row)
            except KeyError:  # the event lacks one of them: that one is absent
                return tuple(map(row.get, names))

        return fields
    functions = [compiler.compile(node) for node in nodes]
    if not functions:
        return lambda row: ()
    if len(functions) == 1:
        (only,) = functions
        return lambda row: (only(row),)
    return lambda row: tuple([f(row) for f in functions])


def _structure(node):
    """A node's shape without source positions: equal for two spellings of the same argument."""
    if isinstance(node, tuple):
        return tuple(_structure(n) for n in node)
    if hasattr(node, "__dataclass_fields__"):
        return (type(node).__name__,) + tuple(
            _structure(getattr(node, name)) for name in node.__dataclass_fields__ if name not in ("pos", "text")
        )
    return node.pattern if hasattr(node, "pattern") else node


def _hide_aggregates(node, hidden: list):
    """`node` with each aggregate call replaced by a field named after its index in `hidden`,
    where the call is appended: what stays is an expression over a result row."""
    if isinstance(node, syntax.Call) and node.name in syntax.AGGREGATES:
        hidden.append(node)
        return syntax.Field(f"\0{len(hidden) - 1}", node.pos)
    if isinstance(node, tuple):
        return tuple(_hide_aggregates(item, hidden) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: _hide_aggregates(getattr(node, f.name), hidden) for f in dataclasses.fields(node)}
        return dataclasses.replace(node, **changes)
    return node


def _then(first, second):
    return lambda row: first(row) and second(row)


class RowStage:
    """parse / fields / filter commands in a row, fused into one function per event."""

    def __init__(self):
        self.operations = []

    def add(self, operation):
        self.operations.append(operation)

    def function(self):
        """fn(row) -> whether the row goes on; each operation runs only if the ones before kept
        the row. A chain of `and`s: cheaper per event than a loop over the operations."""
        return functools.reduce(_then, self.operations)

    def run(self, rows):
        return filter(self.function(), rows)


class ExpandStage:
    """`parse ... multi`: one row per match (a copy of the event's row with the match's fields),
    the row as it is when nothing matches."""

    def __init__(self, found):
        self.found = found

    def run(self, rows):
        for row in rows:
            matches = self.found(row)
            if not matches:
                yield row
            for fields in matches:
                yield {**row, **fields}


class StatsStage:
    def __init__(self, compiler: ExpressionCompiler, command: syntax.Stats):
        self.group_names = [name for _, name in command.groups]
        self.key = _values_of(compiler, [expr for expr, _ in command.groups])
        inputs: list = []
        slots: dict = {}

        def slot(node):
            shape = _structure(node)
            if shape not in slots:
                slots[shape] = len(inputs)
                inputs.append(node)
            return slots[shape]

        # outputs: (name, fn(count, columns, row) -> value), in order. Every aggregate call, of
        # a plain item or inside an expression, is an output computed from the columns the hot
        # loop below collects; an expression item is then evaluated over the result row, where
        # its calls are hidden fields and earlier items' names are already set.
        hidden: list = []
        self.outputs: list = []
        for expr, name in command.items:
            if isinstance(expr, syntax.Call) and expr.name in syntax.AGGREGATES:
                self.outputs.append((name, self.aggregate(compiler, expr, slot)))
                continue
            first = len(hidden)
            compute = compiler.compile(_hide_aggregates(expr, hidden))
            for index in range(first, len(hidden)):
                self.outputs.append((f"\0{index}", self.aggregate(compiler, hidden[index], slot)))
            self.outputs.append((name, lambda count, columns, row, compute=compute: compute(row)))
        self.hidden = [f"\0{index}" for index in range(len(hidden))]
        self.names = [name for _, name in command.items]
        # One value per distinct argument per row; count(*) alone reads none, but each row still
        # needs one slot in its group's list to be counted.
        self.values = _values_of(compiler, inputs) if inputs else lambda row: _COUNTED
        self.width = max(len(inputs), 1)
        self.matched = 0

    @staticmethod
    def aggregate(compiler, call: syntax.Call, slot):
        least, most = syntax.AGGREGATES[call.name]
        if not least <= len(call.args) <= most:
            compiler.error(call.pos, call.name, f"takes {least if least == most else f'{least}-{most}'} arguments")
        parameter = None
        if call.name in ("pct", "percentile"):
            p = call.args[1]
            if not (isinstance(p, syntax.Literal) and isinstance(p.value, (int, float)) and 0 <= p.value <= 100):
                compiler.error(call.pos, call.text, "the percentile must be a number from 0 to 100")
            parameter = p.value
        indexes = [slot(call.args[0])] if call.args else []
        if call.name in ("earliest", "latest"):
            indexes.append(slot(syntax.Field("@timestamp", call.pos)))
        finish = finisher(call.name, parameter)
        return lambda count, columns, row: finish(count, [columns[i] for i in indexes])

    def run(self, rows) -> list:
        # The hot loop: each row's argument values go to the end of its group's one flat list,
        # cut into columns once per group at the end (a slice with a step runs in C).
        key, values = self.key, self.values
        groups: dict[tuple, list] = {}
        self.matched = 0
        for row in rows:
            group = key(row)
            bucket = groups.get(group)
            if bucket is None:
                bucket = groups[group] = []
            bucket += values(row)
        return [self.result(group, bucket) for group, bucket in groups.items()]

    def result(self, group: tuple, bucket: list) -> dict:
        width = self.width
        count = len(bucket) // width
        self.matched += count
        columns = [Column(bucket[i::width]) for i in range(width)]
        row = dict(zip(self.group_names, group))
        for name, compute in self.outputs:
            row[name] = compute(count, columns, row)
        for name in self.hidden:
            del row[name]
        return row


class SortStage:
    def __init__(self, command: syntax.Sort):
        self.keys = command.keys

    def run(self, rows) -> list:
        rows = list(rows)
        for name, descending, _ in reversed(self.keys):
            get = operator.methodcaller("get", name)
            rows.sort(key=lambda row: sort_key(get(row), descending), reverse=descending)
        return rows


class LimitStage:
    def __init__(self, command: syntax.Limit):
        self.count = command.count

    def run(self, rows):
        return islice(rows, self.count)


class DedupStage:
    def __init__(self, command: syntax.Dedup):
        self.names = command.names

    def run(self, rows):
        seen = set()
        for row in rows:
            values = tuple(as_text(row.get(name)) for name in self.names)
            if None in values:  # an absent value is never a duplicate
                yield row
            elif values not in seen:
                seen.add(values)
                yield row


class Plan:
    """A compiled query: `run(events)` returns a GetQueryResults-shaped response."""

    def __init__(self, text: str):
        self.query = syntax.parse(text)
        self.compiler = ExpressionCompiler(text)
        self.stages: list = []
        self.columns: list[str] = []  # output columns named so far
        self.selected = False  # whether fields or stats chose the columns (else @timestamp, @message)
        self.after_stats: set[str] = set()  # fields that exist after the last stats
        self.display: list[str] | None = None
        self.stats: list[StatsStage] = []
        # the first sort or limit command (position, word): AWS allows none before a second stats
        self.first_ordering: tuple[int, str] | None = None
        self.used_fields: set[str] = set()
        self.deduped = False
        for command in self.query.commands:
            self.add(command)
        if not self.selected:
            self.columns = list(DEFAULT_COLUMNS) + [c for c in self.columns if c not in DEFAULT_COLUMNS]
        self.columns = self.display or self.columns
        self.used_fields |= set(self.columns)

    def error(self, pos: int, token: str, problem: str) -> NoReturn:
        raise QuerySyntaxError(self.query.text, pos, token, problem)

    def row_stage(self) -> RowStage:
        if not (self.stages and isinstance(self.stages[-1], RowStage)):
            self.stages.append(RowStage())
        return self.stages[-1]

    def name_columns(self, names) -> None:
        self.columns += [name for name in names if name not in self.columns]

    def note_fields(self, nodes) -> None:
        for node in nodes:
            self.used_fields |= referenced_fields(node)

    def add(self, command) -> None:
        if self.deduped and not isinstance(command, syntax.Limit):
            self.error(command.pos, type(command).__name__.lower(), "only limit may follow dedup (an AWS rule)")
        match command:
            case syntax.Fields():
                self.add_fields(command)
            case syntax.Display():
                self.add_display(command)
            case syntax.Filter():
                self.add_filter(command)
            case syntax.Parse():
                self.add_parse(command)
            case syntax.Stats():
                self.add_stats(command)
            case syntax.Sort():
                self.add_sort(command)
            case syntax.Limit():
                self.add_limit(command)
            case syntax.Dedup():
                self.add_dedup(command)
            case _:
                raise TypeError(f"not a command node: {command!r}")

    def add_fields(self, command: syntax.Fields):
        self.compute(command.items)
        self.name_columns(name for _, name in command.items)
        self.after_stats_add(name for _, name in command.items)
        self.selected = True

    def compute(self, items) -> None:
        """Set each (expression, name) item on the rows, as fields and display do."""
        self.note_fields([expr for expr, _ in items])
        items = [(name, self.compiler.compile(expr)) for expr, name in items
                 if not (isinstance(expr, syntax.Field) and expr.name == name)]  # fmt: skip

        def assign(row):
            for name, compute in items:
                row[name] = compute(row)
            return True

        if len(items) == 1:
            ((name, compute),) = items

            def assign(row):  # noqa: F811 - the usual single computed field, without the loop
                row[name] = compute(row)
                return True

        if items:
            self.row_stage().add(assign)

    def add_display(self, command: syntax.Display):
        self.compute(command.items)
        self.display = [name for _, name in command.items]
        self.after_stats_add(self.display)
        self.used_fields |= set(self.display)

    def add_filter(self, command: syntax.Filter):
        self.note_fields([command.condition])
        condition = self.compiler.compile(command.condition)
        node = command.condition
        returns_bool = isinstance(node, _BOOLEAN_NODES) or (
            isinstance(node, syntax.Binary) and node.op not in "+-*/%^"
        ) or (isinstance(node, syntax.Unary) and node.op == "not")
        self.row_stage().add(condition if returns_bool else lambda row: truthy(condition(row)))

    def add_parse(self, command: syntax.Parse):
        self.note_fields([command.source])
        source, extract = self.compiler.compile(command.source), extractor(command)

        def found(row) -> list:
            text = as_text(source(row))
            return extract(text) if text is not None else []

        if command.multi:
            self.stages.append(ExpandStage(found))
        else:

            def set_fields(row):
                for fields in found(row):
                    row.update(fields)
                return True

            self.row_stage().add(set_fields)
        names = () if command.mode == "logfmt" else command.names  # logfmt's fields depend on the text
        self.name_columns(names)
        self.after_stats_add(names)

    def add_stats(self, command: syntax.Stats):
        if len(self.stats) == MAX_STATS:
            self.error(command.pos, "stats", f"a query can have at most {MAX_STATS} stats commands")
        calls = [call for expr, _ in command.items for call in syntax.aggregate_calls(expr)]
        nodes = calls + [expr for expr, _ in command.groups]
        if self.stats:
            self.check_second_stats_order()
            self.check_second_stats_fields(nodes)
        self.note_fields(nodes)
        stage = StatsStage(self.compiler, command)
        self.stages.append(stage)
        self.stats.append(stage)
        self.columns = stage.group_names + stage.names
        self.after_stats = set(self.columns)
        self.selected = True

    def after_stats_add(self, names) -> None:
        if self.stats:
            self.after_stats |= set(names)

    def check_second_stats_order(self) -> None:
        """AWS accepts sort and limit only after the second stats, not between the two."""
        if self.first_ordering:
            pos, word = self.first_ordering
            self.error(pos, word, f"{word} before a second stats: with two stats commands, sort and limit "
                                  "must come after the second one")

    def check_second_stats_fields(self, nodes) -> None:
        """A second stats may only read the first one's output (and fields computed from it)."""
        for node in nodes:
            for name, pos in field_uses(node):
                if name not in self.after_stats:
                    known = ", ".join(sorted(self.after_stats))
                    self.error(pos, name, f"a second stats can only use the first one's output ({known})")

    def add_sort(self, command: syntax.Sort):
        self.used_fields |= {key.name for key in command.keys}
        self.first_ordering = self.first_ordering or (command.pos, "sort")
        self.stages.append(SortStage(command))

    def add_limit(self, command: syntax.Limit):
        self.first_ordering = self.first_ordering or (command.pos, "limit")
        self.stages.append(LimitStage(command))

    def add_dedup(self, command: syntax.Dedup):
        """Without an earlier sort, AWS orders by @timestamp, newest first, before dedup."""
        if not any(isinstance(stage, SortStage) for stage in self.stages):
            self.add_sort(syntax.Sort((syntax.SortKey("@timestamp", True, True),), command.pos))
        self.used_fields |= set(command.names)
        self.stages.append(DedupStage(command))
        self.deduped = True

    def run(self, events, log: str | None = None) -> dict:
        events = events if isinstance(events, (list, tuple)) else list(events)
        build = row_builder(self.used_fields & set(SYSTEM_FIELDS), log)
        rows: Iterable = map(build, events)
        matched = None
        for stage in self.stages:
            rows = stage.run(rows)
            if matched is None and not isinstance(stage, (RowStage, ExpandStage)):
                rows = kept = list(rows)
                matched = self.stats[0].matched if self.stats and stage is self.stats[0] else len(kept)
        rows = kept = list(islice(rows, syntax.MAX_LIMIT))
        return {
            "status": "Complete",
            "results": [self.result_row(row) for row in rows],
            "statistics": {
                "recordsMatched": float(len(kept) if matched is None else matched),
                "recordsScanned": float(len(events)),
                "bytesScanned": float(sum(len(e["message"]) for e in events)),
            },
        }

    def result_row(self, row: dict) -> list:
        return [{"field": name, "value": render(row[name])} for name in self.columns if row.get(name) is not None]


def evaluate(text: str, events, log: str | None = None) -> dict:
    """GetQueryResults-shaped response of query `text` over FilterLogEvents-shaped `events`."""
    return Plan(text).run(events, log)
