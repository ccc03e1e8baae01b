"""What every wing shares: errors, paths, typed numbers and sizes, clients, the ESM ramp, the workload registry."""
