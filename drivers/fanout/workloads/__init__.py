"""The workloads, a folder each (driver, report, plots, cost model, saved queries, README.md),
listed in registry.py; base.py is what every driver is."""
