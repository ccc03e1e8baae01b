# Least privilege for the transfer workload and the lifecycle rule its uploads rely on, checked
# offline against the mocked AWS provider (see aws.tftest.hcl): the role may write, read, delete,
# list the parts of and abort uploads under transfer/ of the stack's bucket and nowhere else, and
# the bucket aborts multipart uploads left incomplete and expires what transfer and latency write.
# Expected names are spelled out.

mock_provider "aws" {
  source = "./mock-tests/mocks"
}

# seqread.tf's provider in the remote region: configured even when it makes nothing.
mock_provider "aws" {
  alias  = "remote"
  source = "./mock-tests/mocks"
}

variables {
  stack    = "plan-test"
  zip_path = "versions.tf"
}

run "the_role_writes_under_transfer_only" {
  command = apply

  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Resource if s.Sid == "TransferWorkloadObjects"] == [
      ["arn:aws:s3:::plan-test-123456789012-us-east-1/transfer/*"]
    ]
    error_message = "The transfer statement must name exactly transfer/ of the test bucket, in one statement."
  }
  assert {
    condition = toset([for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "TransferWorkloadObjects"][0].Action) == toset([
      "s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"
    ])
    error_message = "The transfer statement must grant its object, abort and list-parts actions, nothing more (no ListBucket)."
  }
}

run "incomplete_uploads_are_aborted" {
  command = apply

  assert {
    condition     = aws_s3_bucket_lifecycle_configuration.data.bucket == aws_s3_bucket.data.id
    error_message = "The lifecycle rule must be on the stack's bucket."
  }
  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.data.rule : r.abort_incomplete_multipart_upload[0].days_after_initiation if r.status == "Enabled" && length(r.abort_incomplete_multipart_upload) > 0] == [1]
    error_message = "One enabled rule must abort multipart uploads a day after they start."
  }
}

run "what_transfer_and_latency_write_expires" {
  command = apply

  assert {
    condition = { for r in aws_s3_bucket_lifecycle_configuration.data.rule : r.filter[0].prefix => r.expiration[0].days if r.status == "Enabled" && length(r.expiration) > 0 } == {
      "transfer/" = 1
      "latency/"  = 1
    }
    error_message = "Exactly the transfer/ and latency/ prefixes must expire, a day after their objects were written (the test objects never)."
  }
}
