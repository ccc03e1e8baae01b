# The latency workload (functions/downloader/latency.py, docs/workloads.md): each message PUTs,
# GETs and DELETEs its own objects under latency/<run_id>/ of every storage class's bucket.

locals {
  # Storage class -> bucket, given to the function as LATENCY_BUCKETS: the classes of var.storage,
  # standard the stack's bucket, express its directory bucket (express.tf).
  latency_buckets = merge(
    { for class, bucket in { standard = aws_s3_bucket.data.id } : class => bucket if contains(var.storage, class) },
    local.express_latency_buckets,
  )
  # Only the workload's prefix of the test bucket: the test objects stay read-only.
  latency_object_arns = ["arn:${local.partition}:s3:::${local.bucket_name}/latency/*"]
}
