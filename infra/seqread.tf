# The seqread workload (drivers/fanout/workloads/seqread/README.md): sequential reads of
# the objects var.seqread_objects declares, in the stack's bucket and, with var.remote_region, in a
# second bucket in that region. The function stays in the stack's region; `fanout fire` uploads
# the objects once and keeps them, and the function only reads them.

locals {
  seqread_remote = var.remote_region != ""
  # Named as the stack's bucket is (names.tf), in the other region.
  remote_bucket_name = "${var.stack}-${local.account_id}-${var.remote_region}"
  seqread_buckets = merge(
    { local = aws_s3_bucket.data.id },
    local.seqread_remote ? { remote = aws_s3_bucket.remote[0].bucket } : {},
  )
  # Exactly the objects the stack declares, in each of its buckets: the keys of
  # functions/runner/seqread/seqread.py's object_key. `fanout fire` uploads them (the role cannot
  # write here) and refuses a run that reads others (the workload's README.md).
  seqread_keys = flatten([for size, jobs in var.seqread_objects : [for job in range(jobs) : "seqread/${size}-bytes/${job}.bin"]])
  seqread_object_arns = flatten([
    for bucket in concat([local.bucket_name], local.seqread_remote ? [local.remote_bucket_name] : []) :
    [for key in local.seqread_keys : "arn:${local.partition}:s3:::${bucket}/${key}"]
  ])
  # The function's variables and the role's statements of this workload (workloads.tf gathers them).
  seqread_environment = {
    SEQREAD_BUCKETS       = jsonencode(local.seqread_buckets)
    SEQREAD_REMOTE_REGION = var.remote_region
  }
  seqread_statements = length(local.seqread_object_arns) > 0 ? [
    {
      # Read exactly the objects it declares, in the stack's bucket and the remote bucket when
      # there is one. None declared: no statement (IAM refuses an empty Resource).
      Sid      = "SeqreadObjects"
      Effect   = "Allow"
      Action   = "s3:GetObject"
      Resource = local.seqread_object_arns
    },
  ] : []
}

# The same account and endpoint as the stack's provider (versions.tf), in the other region. Without
# var.remote_region it points at the stack's region and creates nothing. Its settings repeat
# versions.tf's: Terraform has no way for an alias to inherit another provider block's settings.
provider "aws" {
  alias  = "remote"
  region = local.seqread_remote ? var.remote_region : var.region

  access_key                  = local.custom_endpoint ? "test" : null
  secret_key                  = local.custom_endpoint ? "test" : null
  s3_use_path_style           = local.custom_endpoint
  skip_credentials_validation = local.custom_endpoint
  skip_metadata_api_check     = local.custom_endpoint
  skip_region_validation      = local.custom_endpoint
  max_retries                 = local.custom_endpoint ? 2 : null

  dynamic "endpoints" {
    for_each = local.custom_endpoint && !var.endpoint_in_environment ? [var.endpoint] : []
    content {
      s3  = endpoints.value
      sts = endpoints.value
    }
  }

  default_tags {
    tags = merge(var.tags, { project = "s3-fanout", stack = var.stack })
  }
}

# The bucket's four resources are those of the stack's bucket (s3.tf), in the other region. Not a
# shared module: it would move the stack bucket's resources to new addresses in every deployed
# stack's state (and need module installs at init) for four short blocks.
resource "aws_s3_bucket" "remote" {
  #checkov:skip=CKV_AWS_145: SSE-KMS would make every GET a KMS Decrypt call (as the stack's bucket, s3.tf)
  #checkov:skip=CKV_AWS_18: access logs would write a record per GET of every run, for no reader
  #checkov:skip=CKV_AWS_144: this bucket is itself the other region's copy of the workload's objects
  #checkov:skip=CKV_AWS_21: objects written once by `fanout fire`; versions would only be billed
  #checkov:skip=CKV2_AWS_62: nothing reacts to writes of read-only test objects
  count         = local.seqread_remote ? 1 : 0
  provider      = aws.remote
  bucket        = local.remote_bucket_name
  force_destroy = true
}

resource "aws_s3_bucket_public_access_block" "remote" {
  count                   = local.seqread_remote ? 1 : 0
  provider                = aws.remote
  bucket                  = aws_s3_bucket.remote[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "remote" {
  count    = local.seqread_remote ? 1 : 0
  provider = aws.remote
  bucket   = aws_s3_bucket.remote[0].id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

# As the stack's bucket's rule (transfer.tf): fire's uploads of the objects here are multipart,
# and one interrupted (Ctrl-C, a lost connection) leaves parts that S3 bills until aborted.
resource "aws_s3_bucket_lifecycle_configuration" "remote" {
  count    = local.seqread_remote ? 1 : 0
  provider = aws.remote
  bucket   = aws_s3_bucket.remote[0].id

  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

resource "aws_s3_bucket_policy" "remote" {
  count    = local.seqread_remote ? 1 : 0
  provider = aws.remote
  bucket   = aws_s3_bucket.remote[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "DenyInsecureTransport"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = [aws_s3_bucket.remote[0].arn, "${aws_s3_bucket.remote[0].arn}/*"]
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }]
  })

  depends_on = [aws_s3_bucket_public_access_block.remote]
}

# Its deploy-level options (fanout deploy --remote-region, --job-files) and what the stack reports of them.

variable "remote_region" {
  description = "Region of the seqread workload's second bucket (FROM=remote); empty: none. The function stays in var.region."
  type        = string
  default     = ""

  validation {
    condition     = var.remote_region == "" || (can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", var.remote_region)))
    error_message = "remote_region must be empty or an AWS region name such as us-west-2."
  }
}

variable "seqread_objects" {
  description = "The seqread workload's objects the stack keeps in its bucket and the remote one, and the function's role may read: file size in bytes -> jobs, the objects seqread/<size>-bytes/<job>.bin of jobs 0 to jobs - 1 (fanout deploy's JOB_FILES; it uploads none, fire does). Empty: none."
  type        = map(number)
  default     = {}

  # The function's limits (functions/runner/seqread/seqread.py): 1-64 jobs, files up to 5 GiB.
  validation {
    condition     = alltrue([for size, jobs in var.seqread_objects : can(regex("^[1-9][0-9]*$", size)) && jobs >= 1 && jobs <= 64 && floor(jobs) == jobs])
    error_message = "seqread_objects must map file sizes in bytes (whole numbers) to 1-64 jobs."
  }
  validation {
    condition     = alltrue([for size, jobs in var.seqread_objects : can(regex("^[1-9][0-9]*$", size)) ? tonumber(size) <= 5 * pow(1024, 3) : true])
    error_message = "seqread_objects' file sizes must be at most 5368709120 bytes (5 GiB)."
  }
}

output "remote_region" {
  description = "Region of the seqread workload's second bucket; empty without one."
  value       = var.remote_region
}

output "remote_bucket" {
  description = "The seqread workload's bucket in remote_region; empty without one."
  value       = local.seqread_remote ? aws_s3_bucket.remote[0].bucket : ""
}

output "seqread_objects" {
  description = "The seqread objects the stack declares (file size in bytes -> jobs): the role reads exactly these in each bucket."
  value       = var.seqread_objects
}
