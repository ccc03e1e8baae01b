"""The answer of a query, whichever engine ran it."""

from dataclasses import dataclass, field

from fanout.insights.values import parse_result_value


@dataclass
class Result:
    """Rows as dicts (field -> int, float or str; None where a row has no value), in result order.

    `columns` lists the fields in the order the query produces them; `statistics` is the
    GetQueryResults statistics (recordsMatched, recordsScanned, bytesScanned).
    """

    rows: list = field(default_factory=list)
    statistics: dict = field(default_factory=dict)
    columns: list = field(default_factory=list)

    @classmethod
    def from_response(cls, response: dict) -> "Result":
        """Read a GetQueryResults response (or the local evaluator's, which has the same shape)."""
        columns, cells = [], []
        for raw in response.get("results", []):
            row = {}
            for cell in raw:
                name = cell["field"]
                if name == "@ptr":  # a pointer to the log record, only meaningful on AWS
                    continue
                if name not in columns:
                    columns.append(name)
                row[name] = parse_result_value(cell.get("value", ""))
            cells.append(row)
        rows = [{name: row.get(name) for name in columns} for row in cells]
        return cls(rows=rows, statistics=dict(response.get("statistics", {})), columns=columns)
