# The seqread workload's second bucket, planned offline against the mocked AWS provider (see
# aws.tftest.hcl): with remote_region the bucket is made through the provider alias in that
# region, encrypted, private and TLS-only, and the role reads seqread/ of both buckets and
# nothing more; without it, nothing. Expected names are spelled out, not derived.

mock_provider "aws" {
  source = "./mock-tests/mocks"
}

mock_provider "aws" {
  alias  = "remote"
  source = "./mock-tests/mocks"
}

variables {
  stack    = "plan-test"
  zip_path = "versions.tf"
}

run "remote_region_adds_a_private_encrypted_tls_only_bucket_there" {
  command = apply

  variables {
    remote_region = "us-west-2"
  }

  assert {
    condition     = aws_s3_bucket.remote[0].bucket == "plan-test-123456789012-us-west-2"
    error_message = "The remote bucket must be named after the stack, account and remote region."
  }
  assert {
    condition     = aws_s3_bucket_public_access_block.remote[0].block_public_acls && aws_s3_bucket_public_access_block.remote[0].restrict_public_buckets && aws_s3_bucket_public_access_block.remote[0].ignore_public_acls && aws_s3_bucket_public_access_block.remote[0].block_public_policy
    error_message = "The remote bucket must block every kind of public access."
  }
  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.remote[0].rule).apply_server_side_encryption_by_default).sse_algorithm == "AES256"
    error_message = "The remote bucket must be encrypted with SSE-S3."
  }
  assert {
    condition     = jsondecode(aws_s3_bucket_policy.remote[0].policy).Statement[0].Condition.Bool["aws:SecureTransport"] == "false" && jsondecode(aws_s3_bucket_policy.remote[0].policy).Statement[0].Effect == "Deny"
    error_message = "The remote bucket must deny requests without TLS."
  }
  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "SeqreadObjects"] == [{
      Sid      = "SeqreadObjects"
      Effect   = "Allow"
      Action   = "s3:GetObject"
      Resource = ["arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/*", "arn:aws:s3:::plan-test-123456789012-us-west-2/seqread/*"]
    }]
    error_message = "The role must read seqread/ of both buckets, and only read."
  }
  assert {
    condition     = jsondecode(aws_lambda_function.downloader.environment[0].variables.SEQREAD_BUCKETS).remote == "plan-test-123456789012-us-west-2" && aws_lambda_function.downloader.environment[0].variables.SEQREAD_REMOTE_REGION == "us-west-2"
    error_message = "The function must be told the remote bucket and its region."
  }
  assert {
    condition     = output.remote_bucket == "plan-test-123456789012-us-west-2" && output.remote_region == "us-west-2"
    error_message = "The outputs must name the remote bucket and region."
  }
}

run "without_remote_region_nothing_is_created_and_only_the_stack_bucket_is_read" {
  command = apply

  assert {
    condition     = length(aws_s3_bucket.remote) == 0 && output.remote_bucket == ""
    error_message = "Without remote_region there must be no second bucket."
  }
  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Resource if s.Sid == "SeqreadObjects"] == [["arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/*"]]
    error_message = "Without remote_region the role must read seqread/ of the stack's bucket only."
  }
}

run "remote_region_must_be_a_region_name" {
  command = plan

  variables {
    remote_region = "Mars"
  }

  expect_failures = [var.remote_region]
}
