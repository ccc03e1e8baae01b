# The latency workload (drivers/fanout/workloads/latency/README.md): each message PUTs,
# GETs and DELETEs its own objects under latency/<run_id>/ of every storage class's bucket.

locals {
  # Whether the latency workload measures S3 Standard, on the stack's bucket. One condition for
  # both what the function is told (LATENCY_BUCKETS) and what it may do (iam.tf), so that the
  # role grants nothing on the test bucket a run could not use.
  latency_standard = contains(var.storage, "standard")
  # Storage class -> bucket, given to the function as LATENCY_BUCKETS: the classes of var.storage,
  # standard the stack's bucket, express its directory bucket (express.tf).
  latency_buckets = merge(
    local.latency_standard ? { standard = aws_s3_bucket.data.id } : {},
    local.express_latency_buckets,
  )
  # Only the workload's prefix of the test bucket: the test objects stay read-only; what a killed
  # message leaves there expires (transfer.tf's lifecycle rule).
  latency_prefix      = "latency/"
  latency_object_arns = ["arn:${local.partition}:s3:::${local.bucket_name}/${local.latency_prefix}*"]
  # The function's variables and the role's statements of this workload (workloads.tf gathers them).
  latency_environment = { LATENCY_BUCKETS = jsonencode(local.latency_buckets) }
  latency_statements = local.latency_standard ? [
    {
      # Its own objects under latency/, deleted by the message that wrote them. No
      # s3:ListBucket: it deletes the keys it wrote. Only when it measures standard; express has
      # its own policy (express.tf).
      Sid      = "LatencyWorkloadObjects"
      Effect   = "Allow"
      Action   = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"]
      Resource = local.latency_object_arns
    },
  ] : []
}

# Its deploy-level options (fanout deploy --storage, --express-az) and what the stack reports of them.

variable "storage" {
  description = "Storage classes the latency workload measures: \"standard\" (the stack's bucket) and/or \"express\" (an S3 Express One Zone directory bucket in express_az). The names are fanout.workloads.latency.storage.CLASSES; tests/infra/test_storage_validation.py keeps them equal."
  type        = set(string)
  default     = ["standard"]

  validation {
    condition     = length(var.storage) > 0 && alltrue([for class in var.storage : contains(["express", "standard"], class)])
    error_message = "storage must hold one or more of express, standard."
  }
}

variable "express_az" {
  description = "Availability zone ID (not name) of the Express One Zone directory bucket, such as use1-az4; required when storage includes \"express\", empty otherwise. A function outside this zone pays cross-AZ latency (docs/storage.md)."
  type        = string
  default     = ""

  validation {
    condition     = var.express_az == "" || can(regex("^[a-z]{2,5}[0-9]{1,2}-az[0-9]{1,2}$", var.express_az))
    error_message = "express_az must be an availability zone ID such as use1-az4 (not a zone name such as us-east-1a)."
  }
}

output "storage" {
  description = "Storage classes the latency workload measures (standard, express), sorted."
  value       = sort(var.storage)
}

output "express_bucket" {
  description = "Name of the S3 Express One Zone directory bucket; empty when storage does not include express."
  value       = local.express ? aws_s3_directory_bucket.express[0].bucket : ""
}

output "express_az" {
  description = "Availability zone ID of the directory bucket; empty when storage does not include express."
  value       = local.express ? var.express_az : ""
}
