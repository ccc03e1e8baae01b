"""What `parse` extracts from a field's text, in each of the modes the parse page lists: glob,
regex (also `multi`: every match, one row each), logfmt and CSV.

An extractor maps a text to the list of field sets it yields: none when the text does not match
(the event goes on without the fields, as AWS documents), one per match otherwise.
logfmt is parsed with one regular expression (`key=value` or `key="quoted \\" value"`, separated
by spaces), a format too small for a dependency; CSV with the standard library's csv reader.
"""

import csv
import re

from fanout.insights import syntax

_LOGFMT_PAIR = re.compile(r'([^\s="]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)')
_ESCAPED = re.compile(r"\\(.)")


def _pattern(command: syntax.Parse):
    pattern, pairs = command.pattern, tuple(zip(command.names, command.groups))
    assert pattern is not None, "glob and regex parses always have a pattern"

    def fields(match) -> dict:
        return {name: value for name, group in pairs if (value := match.group(group)) is not None}

    if command.multi:
        return lambda text: [fields(match) for match in pattern.finditer(text)]

    def first(text):
        match = pattern.search(text)
        return [fields(match)] if match else []

    return first


def _unquote(value: str) -> str:
    return _ESCAPED.sub(r"\1", value[1:-1]) if value.startswith('"') else value


def _logfmt(command: syntax.Parse):
    """Each `key=value` pair becomes the field alias.key (`lf.level`), as the page's dot notation
    reads them; a key without `=` (a bare word) gives nothing, as the page does not say."""
    prefix = command.names[0] + "."

    def pairs(text):
        found = {prefix + key: _unquote(value) for key, value in _LOGFMT_PAIR.findall(text)}
        return [found] if found else []

    return pairs


def _csv(command: syntax.Parse):
    """The n-th value (RFC 4180 quoting, spaces kept) goes to the n-th alias; values beyond the
    aliases are dropped and aliases beyond the values stay absent."""
    names = command.names

    def values(text):
        row = next(csv.reader([text]), [])
        return [dict(zip(names, row))] if row else []

    return values


EXTRACTORS = {"glob": _pattern, "regex": _pattern, "logfmt": _logfmt, "csv": _csv}  # by syntax.PARSE_MODES


def extractor(command: syntax.Parse):
    """fn(text) -> list of field dicts for a parse command."""
    return EXTRACTORS[command.mode](command)
