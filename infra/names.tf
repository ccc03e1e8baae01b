# Every resource name and ARN, derived once from the stack name.
#
# ARNs are built from names instead of read from resources so that nothing waits for a resource
# it does not need: the IAM policy, for example, is written while the queues are still being
# created (the provider spends about 25 s confirming each new queue's attributes).

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition

  # S3 bucket names are global across all AWS accounts: account id and region make it unique.
  bucket_name = "${var.stack}-${local.account_id}-${var.region}"
  object_key  = "objects/${var.object_size}-bytes.bin"
  # KEYS=N: the test object and N-1 copies under prefixes of their own (S3's request rate is per
  # partitioned prefix); the function reads copy seq mod N.
  copy_keys     = [for i in range(var.keys) : i == 0 ? local.object_key : "copies/${i}/${var.object_size}-bytes.bin"]
  object_keys   = distinct(concat(local.copy_keys, [for size in var.test_object_sizes : "objects/${size}-bytes.bin"]))
  queue_name    = "${var.stack}-requests"
  dlq_name      = "${var.stack}-dlq"
  function_name = "${var.stack}-downloader"
  role_name     = "${var.stack}-downloader"
  log_group     = "/aws/lambda/${local.function_name}"

  object_arns   = [for key in local.object_keys : "arn:${local.partition}:s3:::${local.bucket_name}/${key}"]
  queue_arn     = "arn:${local.partition}:sqs:${var.region}:${local.account_id}:${local.queue_name}"
  log_group_arn = "arn:${local.partition}:logs:${var.region}:${local.account_id}:log-group:${local.log_group}"
}
