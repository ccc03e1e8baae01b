# The transfer workload (drivers/fanout/workloads/transfer/README.md): each message uploads,
# copies and deletes its own objects under transfer/<run_id>/ of the stack's bucket.

locals {
  # Only the workload's prefix of the test bucket: the test objects stay read-only.
  transfer_object_arns = ["arn:${local.partition}:s3:::${local.bucket_name}/transfer/*"]
}

# A message aborts its multipart upload when it fails; a function killed outright (timeout, crash)
# cannot, and S3 keeps (and bills) the parts of an incomplete upload until it is aborted. This
# rule aborts any upload still incomplete a day after it started (the shortest S3 allows): a
# run's messages end within the function timeout, 15 minutes at most.
resource "aws_s3_bucket_lifecycle_configuration" "data" {
  bucket = aws_s3_bucket.data.id

  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}
