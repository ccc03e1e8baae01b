# The bucket holding the test object. The object itself is uploaded by the deploy command
# (`fanout deploy`), not by Terraform: objects of many GB need the multipart transfer manager.

resource "aws_s3_bucket" "data" {
  #checkov:skip=CKV_AWS_145: SSE-KMS would make every GET a KMS Decrypt call: KMS request quotas would throttle a fan-out of hundreds of readers and distort the measurement (SSE-S3 below)
  #checkov:skip=CKV_AWS_18: access logs would write one record per GET of every run (hundreds of thousands) to a second bucket, at a cost and for no reader; the function logs each download itself
  #checkov:skip=CKV_AWS_144: one test object, uploaded again by `fanout deploy` whenever missing; a replica bucket in another region would double the cost for nothing
  #checkov:skip=CKV_AWS_21: the object is written only by `fanout deploy`; old versions would be billed and `destroy` would have to delete them too
  #checkov:skip=CKV2_AWS_62: nothing reacts to writes to a bucket holding one read-only test object
  bucket = local.bucket_name
  # Destroy must leave nothing behind, including the test object.
  force_destroy = true
}

resource "aws_s3_bucket_public_access_block" "data" {
  bucket                  = aws_s3_bucket.data.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

# SSE-S3 rather than a KMS key: the function then needs no kms:Decrypt and KMS request quotas
# cannot throttle a fan-out of hundreds of readers.
resource "aws_s3_bucket_server_side_encryption_configuration" "data" {
  bucket = aws_s3_bucket.data.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_policy" "data" {
  bucket = aws_s3_bucket.data.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "DenyInsecureTransport"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = [aws_s3_bucket.data.arn, "${aws_s3_bucket.data.arn}/*"]
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }]
  })

  # S3 rejects concurrent configuration changes to one bucket; apply the policy after the block.
  depends_on = [aws_s3_bucket_public_access_block.data]
}
