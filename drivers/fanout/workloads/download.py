"""The download workload's driver side: fire's --strategy and report.py are its options and its
report (they predate the registry); this module gives them the registry's interface."""

from fanout import report as run_report

OPTIONS: tuple[str, ...] = ()  # fire's --strategy is fire's own: every run carries a strategy


def report(stack, record: dict):
    """The run's tables, files and plots (fanout.report); returns its folder."""
    summary = run_report.build(stack, record)
    run_report.show(summary)
    return run_report.write(summary)


def write_report(stack, record: dict):
    """The run's records and tables without plots or printing (a sweep's cell)."""
    return run_report.write(run_report.build(stack, record), plots_too=False)

