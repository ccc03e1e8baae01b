"""The pipeline stages, one command each: deploy, fire, wait, query, report, compare, sweep, demo."""
