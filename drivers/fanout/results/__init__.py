"""Results and their statistics: run and sweep folders, records, cells, concurrency, stats, tables, figures."""
