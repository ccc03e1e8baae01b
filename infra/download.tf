# The download workload (drivers/fanout/workloads/download/README.md): each message downloads the
# stack's test object with a strategy. The test objects, and the role's read of them, are every
# stack's (s3.tf, iam.tf); what is the workload's own is the default strategy the function is
# deployed with, for a message that names none.

locals {
  # The strategy's name; the function's preconditions (lambda.tf) check it against the endpoint
  # and /tmp.
  download_strategy_name = split(" ", trimspace(var.default_strategy))[0]
  download_writes_tmp    = local.download_strategy_name == "download_file"
  # The function's variables and the role's statements of this workload (workloads.tf gathers
  # them): it reads only the test objects, which the role grants every stack.
  download_environment = { DOWNLOAD_DEFAULT_STRATEGY = var.default_strategy }
  download_statements  = []
}

# Its deploy-level option (fanout deploy --strategy) and what the stack reports of it. Both keep the
# name they had when every stack had them, so that a deployed stack's state and outputs read the same.

variable "default_strategy" {
  description = "Download strategy of messages that name none (fanout fire always names one): a strategy name and optional parameters, such as \"download_file\" or \"ranged connections=8 chunk_size=8MiB\". The strategies and their parameters are defined in functions/runner/download/strategies.py (see docs/strategies.md); here only the name is checked, fanout deploy and the function check the parameters."
  type        = string
  default     = "download_file"

  # The names of functions/runner/download/strategies.py; tests/infra/test_strategy_validation.py keeps them equal.
  validation {
    condition     = contains(["download_file", "stream", "ranged", "crt", "repeated"], split(" ", trimspace(var.default_strategy))[0])
    error_message = "default_strategy must start with a strategy name: download_file, stream, ranged, crt or repeated."
  }
}

output "default_strategy" {
  description = "Download strategy of messages that name none (canonical text as deployed)."
  value       = var.default_strategy
}
