"""The workloads, a folder each (driver, report, plots, cost model, saved queries, README.md),
registered by name in fanout.common.registry; base.py is what every driver is."""
