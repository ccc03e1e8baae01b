# The seqread workload's second bucket and its objects, planned offline against the mocked AWS
# provider (see aws.tftest.hcl): with remote_region the bucket is made through the provider alias
# in that region, encrypted, private and TLS-only; the role reads exactly the declared objects
# (seqread_objects) of each bucket and nothing more, and a declaration too large for IAM's policy
# size is refused at plan. Expected names are spelled out, not derived.

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
    remote_region   = "us-west-2"
    seqread_objects = { "67108864" = 1, "1048576" = 2 }
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
    condition     = aws_s3_bucket_lifecycle_configuration.remote[0].bucket == aws_s3_bucket.remote[0].id && [for r in aws_s3_bucket_lifecycle_configuration.remote[0].rule : r.abort_incomplete_multipart_upload[0].days_after_initiation if r.status == "Enabled"] == [1]
    error_message = "The remote bucket must abort multipart uploads a day after they start, as the stack's bucket does."
  }
  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "SeqreadObjects"] == [{
      Sid    = "SeqreadObjects"
      Effect = "Allow"
      Action = "s3:GetObject"
      Resource = [
        "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/1048576-bytes/0.bin",
        "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/1048576-bytes/1.bin",
        "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/67108864-bytes/0.bin",
        "arn:aws:s3:::plan-test-123456789012-us-west-2/seqread/1048576-bytes/0.bin",
        "arn:aws:s3:::plan-test-123456789012-us-west-2/seqread/1048576-bytes/1.bin",
        "arn:aws:s3:::plan-test-123456789012-us-west-2/seqread/67108864-bytes/0.bin",
      ]
    }]
    error_message = "The role must read exactly the declared objects of both buckets, and only read."
  }
  # 4 ARNs of 73 characters and 2 of 74, each quoted and comma separated, in brackets:
  # 440 + 6 x 2 + 5 + 2; tests/test_seqread_objects.py expects the driver's count to agree.
  assert {
    condition     = length(jsonencode(local.seqread_object_arns)) == 459
    error_message = "The declared objects' ARNs must take the characters the driver counts (declared.policy_chars)."
  }
  assert {
    condition     = output.seqread_objects == tomap({ "67108864" = 1, "1048576" = 2 })
    error_message = "The stack must output its declared objects."
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

  variables {
    seqread_objects = { "67108864" = 3 }
  }

  assert {
    condition     = length(aws_s3_bucket.remote) == 0 && length(aws_s3_bucket_lifecycle_configuration.remote) == 0 && output.remote_bucket == ""
    error_message = "Without remote_region there must be no second bucket."
  }
  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Resource if s.Sid == "SeqreadObjects"] == [[
      "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/67108864-bytes/0.bin",
      "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/67108864-bytes/1.bin",
      "arn:aws:s3:::plan-test-123456789012-us-east-1/seqread/67108864-bytes/2.bin",
    ]]
    error_message = "Without remote_region the role must read the declared objects of the stack's bucket only."
  }
}

run "no_objects_declared_no_seqread_statement" {
  command = plan

  variables {
    remote_region = "us-west-2"
  }

  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "SeqreadObjects"] == [] && !strcontains(aws_iam_role_policy.downloader.policy, "seqread")
    error_message = "With no seqread_objects the role must read nothing of the workload (IAM refuses an empty Resource)."
  }
}

# What fanout deploy keeps for the role's other statements (declared.py OTHER_STATEMENTS_CHARS):
# enough for the longest stack name, express, the remote bucket and a sweep's eight object sizes.
run "the_other_statements_fit_what_the_driver_keeps_for_them" {
  command = plan

  variables {
    stack             = "a-thirty-character-stack-name0"
    remote_region     = "ap-southeast-2"
    storage           = ["standard", "express"]
    express_az        = "use1-az4"
    test_object_sizes = [1, 1024, 1048576, 8388608, 67108864, 268435456, 1073741824, 10737418240]
    seqread_objects   = { "67108864" = 1 }
  }

  assert {
    condition     = local.inline_policy_chars - length(jsonencode(local.seqread_object_arns)) <= 2560
    error_message = "The role's statements other than seqread's must fit in 2560 characters (declared.py)."
  }
}

# 128 objects in 2 buckets: 256 ARNs of about 76 characters, over IAM's 10,240.
run "a_declaration_over_the_policy_size_is_refused_at_plan" {
  command = plan

  variables {
    remote_region   = "us-west-2"
    seqread_objects = { "67108864" = 64, "1073741824" = 64 }
  }

  expect_failures = [aws_iam_role_policy.downloader]
}

run "remote_region_must_be_a_region_name" {
  command = plan

  variables {
    remote_region = "Mars"
  }

  expect_failures = [var.remote_region]
}
