# S3 Express One Zone for the latency workload: a directory bucket in one availability zone, and
# the one permission its session authentication needs. Nothing here exists unless var.storage
# includes "express".
#
# Directory buckets authorise object requests through sessions: the SDK calls CreateSession on the
# bucket (and refreshes it every 5 minutes) and signs PutObject/GetObject/DeleteObject with the
# session's credentials, so s3express:CreateSession on the bucket is the only action the function
# needs. A session covers the whole bucket (IAM cannot narrow it to a prefix), which is why this
# bucket holds nothing but the latency workload's short-lived objects.

locals {
  express = contains(var.storage, "express")
  # <base>--<zone id>--x-s3, the format S3 requires; the account id keeps the base unique per
  # account like the standard bucket's (at most 30 + 1 + 12 + 2 + 12 + 6 = 63 characters).
  express_bucket_name = "${var.stack}-${local.account_id}--${var.express_az}--x-s3"
  express_bucket_arn  = "arn:${local.partition}:s3express:${var.region}:${local.account_id}:bucket/${local.express_bucket_name}"
  # Storage class -> bucket for the latency workload's LATENCY_BUCKETS (merged with the standard entry).
  express_latency_buckets = local.express ? { express = local.express_bucket_name } : {}
}

# The region's zone IDs, to refuse at plan time a zone of another region (or a mistyped one) that
# AWS would otherwise refuse only while creating the bucket, after other resources exist.
data "aws_availability_zones" "express" {
  #checkov:skip=CKV_AWS_394: only a membership check of express_az, nothing is created per zone; a zone AWS adds is a valid choice
  count = local.express ? 1 : 0
}

resource "aws_s3_directory_bucket" "express" {
  count = local.express ? 1 : 0

  bucket = local.express_bucket_name
  location {
    name = var.express_az
    type = "AvailabilityZone"
  }
  data_redundancy = "SingleAvailabilityZone"
  # Destroy must leave nothing behind, even objects an interrupted invocation failed to delete.
  force_destroy = true
  # Public access: S3 blocks it on every directory bucket and does not let it be turned off, so
  # there is no aws_s3_bucket_public_access_block here (the resource does not apply to them).

  lifecycle {
    # Checked here rather than in variable "express_az": a validation there may not read
    # var.storage before Terraform 1.9, and the module supports 1.5.
    precondition {
      condition     = var.express_az != ""
      error_message = "storage includes \"express\" but express_az is empty: set express_az to the availability zone ID of the directory bucket, such as use1-az4."
    }
    precondition {
      condition     = var.express_az == "" || contains(data.aws_availability_zones.express[0].zone_ids, var.express_az)
      error_message = "express_az ${var.express_az} is not an available zone ID of ${var.region}; its zone IDs are ${join(", ", data.aws_availability_zones.express[0].zone_ids)}."
    }
  }
}

# SSE-S3, as on the standard bucket: with SSE-KMS every PUT and GET would involve KMS, whose quotas
# and latency would become part of what the latency workload measures.
resource "aws_s3_bucket_server_side_encryption_configuration" "express" {
  count  = local.express ? 1 : 0
  bucket = aws_s3_directory_bucket.express[0].bucket

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

locals {
  express_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      # ReadWrite sessions (the SDK's default) authorise the latency workload's PUT, GET and
      # DELETE; the bucket's ARN is built from its name (names.tf explains why).
      Sid      = "ExpressSession"
      Effect   = "Allow"
      Action   = "s3express:CreateSession"
      Resource = local.express_bucket_arn
    }]
  })
}

# A second inline policy of the role: iam.tf counts it against the role's limit.
resource "aws_iam_role_policy" "express" {
  count = local.express ? 1 : 0

  name   = "express-session"
  role   = aws_iam_role.downloader.id
  policy = local.express_policy
}
