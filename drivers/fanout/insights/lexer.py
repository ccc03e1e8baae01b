"""Tokens of the Logs Insights query language.

Written by hand because no library tokenizes this language, and because `/` is both division and
the start of a regular expression: the parser decides which (`Lexer.regex_at`) where the grammar
allows a pattern.
"""

import re
from dataclasses import dataclass
from typing import Any, NoReturn

from fanout.common.errors import UsageError
from fanout.insights.values import number_from_text


class QuerySyntaxError(UsageError):
    """A query the local evaluator cannot run, with the line, column and token at fault."""

    def __init__(self, text: str, pos: int, token: str, problem: str):
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        self.token = token
        super().__init__(f"query line {self.line}, column {self.column}, at {token!r}: {problem}")


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, FIELD (backticked), NUMBER, DURATION, STRING, REGEX, OP, END
    value: Any  # str, but a number for NUMBER and (amount, unit) for DURATION
    pos: int
    text: str  # the source text of the token

    def is_word(self, *words: str) -> bool:
        return self.kind == "NAME" and self.value.lower() in words


DURATION_UNITS = {
    "ms": "ms", "msec": "ms", "millisecond": "ms",
    "s": "s", "sec": "s", "second": "s",
    "m": "m", "min": "m", "minute": "m",
    "h": "h", "hr": "h", "hour": "h",
    "d": "d", "day": "d",
    "w": "w", "week": "w",
    "mo": "mo", "mon": "mo", "month": "mo",
    "q": "q", "qtr": "q", "quarter": "q",
    "y": "y", "yr": "y", "year": "y",
}  # fmt: skip

_SPACE = re.compile(r"(?:\s+|#[^\n]*)+")
_NAME = re.compile(r"[A-Za-z_@][A-Za-z0-9_@.]*")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)([A-Za-z]*)")
_OPERATORS = ("=~", "==", "!=", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "^", "%", "(", ")", "[", "]",
              ",", "|")  # fmt: skip
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def duration_unit(word: str) -> str | None:
    """Canonical unit for a bin() unit or its plural ("hrs" -> "h"), None when unknown."""
    word = word.lower()
    if word in DURATION_UNITS:
        return DURATION_UNITS[word]
    if len(word) > 2 and word.endswith("s") and len(word[:-1]) > 1:
        return DURATION_UNITS.get(word[:-1])
    return None


class Lexer:
    def __init__(self, text: str):
        self.text = text

    def error(self, pos: int, problem: str, token: str | None = None) -> NoReturn:
        if token is None:
            token = self.text[pos : pos + 12].split()[0] if self.text[pos:].strip() else "end of query"
        raise QuerySyntaxError(self.text, pos, token, problem)

    def token_at(self, pos: int) -> Token:
        """The token starting at or after `pos` (skipping spaces and # comments)."""
        text = self.text
        space = _SPACE.match(text, pos)
        if space:
            pos = space.end()
        if pos >= len(text):
            return Token("END", None, pos, "end of query")
        char = text[pos]
        if char in "\"'":
            return self._string(pos)
        if char == "`":
            end = text.find("`", pos + 1)
            if end < 0:
                self.error(pos, "unterminated backtick field name", "`")
            return Token("FIELD", text[pos + 1 : end], pos, text[pos : end + 1])
        if char.isdigit() or (char == "." and text[pos + 1 : pos + 2].isdigit()):
            return self._number(pos)
        name = _NAME.match(text, pos)
        if name:
            return Token("NAME", name.group(), pos, name.group())
        for op in _OPERATORS:
            if text.startswith(op, pos):
                return Token("OP", op, pos, op)
        self.error(pos, "unexpected character", char)

    def regex_at(self, pos: int) -> Token:
        """A /regular expression/ starting at `pos`; `\\/` stands for a slash inside it."""
        text, i, chars = self.text, pos + 1, []
        while i < len(text) and text[i] != "/":
            if text[i] == "\\" and text[i + 1 : i + 2] == "/":
                chars.append("/")
                i += 2
                continue
            if text[i] == "\\" and i + 1 < len(text):
                chars.append(text[i : i + 2])
                i += 2
                continue
            chars.append(text[i])
            i += 1
        if i >= len(text):
            self.error(pos, "unterminated regular expression (missing closing /)", "/")
        return Token("REGEX", "".join(chars), pos, text[pos : i + 1])

    def _string(self, pos: int) -> Token:
        text, quote, i, chars = self.text, self.text[pos], pos + 1, []
        while i < len(text) and text[i] != quote:
            if text[i] == "\\" and i + 1 < len(text):
                chars.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
                i += 2
                continue
            chars.append(text[i])
            i += 1
        if i >= len(text):
            self.error(pos, f"unterminated string (missing closing {quote})", quote)
        return Token("STRING", "".join(chars), pos, text[pos : i + 1])

    def _number(self, pos: int) -> Token:
        match = _NUMBER.match(self.text, pos)
        if not match:  # ".5"
            match = re.compile(r"(\.\d+(?:[eE][-+]?\d+)?)([A-Za-z]*)").match(self.text, pos)
        assert match, "token_at calls _number only at a digit, or a '.' and a digit"
        digits, suffix = match.groups()
        if suffix:
            unit = duration_unit(suffix)
            if unit is None or not digits.isdigit():
                self.error(pos, "not a number or a duration such as 5m (units: ms s m h d w mo q y)",
                           match.group())
            if int(digits) < 1:  # a zero-length period has no bins to floor to
                self.error(pos, "a period must be at least 1 unit long", match.group())
            return Token("DURATION", (int(digits), unit), pos, match.group())
        return Token("NUMBER", number_from_text(digits), pos, digits)
