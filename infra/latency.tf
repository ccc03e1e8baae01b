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
