# The transfer workload (drivers/fanout/workloads/transfer/README.md): each message uploads,
# copies and deletes its own objects under transfer/<run_id>/ of the stack's bucket.

locals {
  # Only the workload's prefix of the test bucket: the test objects stay read-only.
  transfer_object_arns = ["arn:${local.partition}:s3:::${local.bucket_name}/transfer/*"]
  # What the workloads write and delete themselves, each under its own prefix of the bucket:
  # whatever a killed message leaves there expires (the rule below).
  expiring_prefixes = ["transfer/", local.latency_prefix]
  # The function's variables and the role's statements of this workload (workloads.tf gathers them).
  transfer_environment = {}
  transfer_statements = [
    {
      # Its own objects under transfer/, deleted by the message that wrote them. Multipart
      # uploads and copies are s3:PutObject (S3 authorises CreateMultipartUpload, UploadPart,
      # UploadPartCopy, CompleteMultipartUpload and CopyObject with it; a copy's source with
      # s3:GetObject); FAN's messages list the parts of their shared upload (ListParts) and
      # abort it on failure.
      Sid    = "TransferWorkloadObjects"
      Effect = "Allow"
      Action = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts"]
      Resource = local.transfer_object_arns
    },
  ]
}

# A message deletes what it wrote and aborts its multipart upload when it fails; a function killed
# outright (timeout, crash) cannot, and S3 keeps (and bills) its objects and the parts of an
# incomplete upload until they are deleted or aborted (up to 5 GB an object for transfer). The
# first rule aborts any upload still incomplete a day after it started; the others expire the
# workloads' objects a day after they were written (a day: the shortest S3 allows for both; a
# run's messages end within the function timeout, 15 minutes at most). The test objects and
# seqread's objects, which runs read again, are under no such prefix and stay.
resource "aws_s3_bucket_lifecycle_configuration" "data" {
  #checkov:skip=CKV_AWS_300: the first rule aborts incomplete uploads in the whole bucket; the check wants it in every rule, the expiring ones too
  bucket = aws_s3_bucket.data.id

  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  dynamic "rule" {
    for_each = local.expiring_prefixes
    content {
      id     = "expire-${trimsuffix(rule.value, "/")}-objects"
      status = "Enabled"
      filter {
        prefix = rule.value
      }
      expiration {
        days = 1
      }
    }
  }
}
