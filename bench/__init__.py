"""Benchmarks: each module's `main()` measures one thing against a baseline run in the same process."""
