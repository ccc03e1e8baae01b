"""What every wing shares: errors, paths, typed numbers and sizes, clients, the ESM ramp, what a workload declares."""
