"""The workloads, a folder each (its driver, report, plots and cost model), registered by name in
fanout.common.registry; base.py is what every driver is."""
