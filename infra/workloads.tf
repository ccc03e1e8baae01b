# The workloads' share of the stack, one line each per list (docs/architecture.md, *Adding a
# workload*): a workload's own file (download.tf, latency.tf, seqread.tf, transfer.tf) defines
# local.<name>_statements, the role's IAM statements it needs (iam.tf), and
# local.<name>_environment, the function's variables it reads (lambda.tf).
# tests/test_workload_lists.py checks both lists against the drivers' registry. The statements
# keep the order the role's policy had.

locals {
  workload_statements = concat(
    local.download_statements,
    local.transfer_statements,
    local.latency_statements,
    local.seqread_statements,
  )
  workload_environment = merge(
    local.download_environment,
    local.latency_environment,
    local.seqread_environment,
    local.transfer_environment,
  )
}
