# The S3 Express One Zone branch (var.storage with "express"), planned offline against the mocked
# AWS provider (see aws.tftest.hcl): the directory bucket, its zone, and the one permission its
# session authentication needs, scoped to it. Expected names are spelled out, not derived the way
# express.tf derives them.

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

run "standard_only_has_no_directory_bucket_and_no_s3express_permission" {
  command = plan

  assert {
    condition     = length(aws_s3_directory_bucket.express) == 0 && length(aws_s3_bucket_server_side_encryption_configuration.express) == 0
    error_message = "The default storage (standard) must create no directory bucket."
  }
  assert {
    condition     = length(aws_iam_role_policy.express) == 0 && !strcontains(aws_iam_role_policy.downloader.policy, "s3express")
    error_message = "Without express the role must have no s3express permission."
  }
  assert {
    condition     = output.storage == tolist(["standard"]) && output.express_bucket == "" && output.express_az == "" && length(local.express_latency_buckets) == 0
    error_message = "Without express the outputs and the latency bucket map must name no directory bucket."
  }
}

run "express_creates_a_directory_bucket_in_the_zone" {
  command = plan

  variables {
    storage    = ["standard", "express"]
    express_az = "use1-az4"
  }

  assert {
    condition     = aws_s3_directory_bucket.express[0].bucket == "plan-test-123456789012--use1-az4--x-s3"
    error_message = "The directory bucket must be named <stack>-<account>--<zone id>--x-s3."
  }
  assert {
    condition     = length(aws_s3_directory_bucket.express[0].bucket) <= 63
    error_message = "Bucket names are at most 63 characters."
  }
  assert {
    condition = (
      aws_s3_directory_bucket.express[0].location[0].name == "use1-az4" &&
      aws_s3_directory_bucket.express[0].location[0].type == "AvailabilityZone" &&
      aws_s3_directory_bucket.express[0].data_redundancy == "SingleAvailabilityZone"
    )
    error_message = "The directory bucket must live in express_az, one availability zone."
  }
  assert {
    condition     = aws_s3_directory_bucket.express[0].force_destroy
    error_message = "destroy must empty the directory bucket."
  }
  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.express[0].rule).apply_server_side_encryption_by_default).sse_algorithm == "AES256"
    error_message = "The directory bucket must use SSE-S3."
  }
  assert {
    condition     = output.storage == tolist(["express", "standard"]) && output.express_az == "use1-az4" && local.express_latency_buckets == tomap({ express = "plan-test-123456789012--use1-az4--x-s3" })
    error_message = "The outputs and the latency bucket map must name the directory bucket."
  }
}

run "the_role_may_open_sessions_on_that_bucket_only" {
  # Applied (against the mock) so that the role's id is known.
  command = apply

  variables {
    storage    = ["express"]
    express_az = "use1-az4"
  }

  assert {
    condition = jsondecode(aws_iam_role_policy.express[0].policy).Statement == [{
      Sid      = "ExpressSession"
      Effect   = "Allow"
      Action   = "s3express:CreateSession"
      Resource = "arn:aws:s3express:us-east-1:123456789012:bucket/plan-test-123456789012--use1-az4--x-s3"
    }]
    error_message = "The role must allow exactly s3express:CreateSession on the directory bucket's ARN."
  }
  assert {
    condition     = aws_iam_role_policy.express[0].role == aws_iam_role.downloader.id
    error_message = "The session permission belongs to the function's role."
  }
  assert {
    condition     = !strcontains(aws_iam_role_policy.downloader.policy, "s3express")
    error_message = "The main policy must not grant s3express actions."
  }
}

run "express_needs_a_zone" {
  command = plan

  variables {
    storage = ["standard", "express"]
  }

  expect_failures = [aws_s3_directory_bucket.express]
}

run "express_needs_a_zone_of_the_region" {
  command = plan

  variables {
    storage    = ["express"]
    express_az = "usw2-az1"
  }

  expect_failures = [aws_s3_directory_bucket.express]
}

run "latency_buckets_name_every_chosen_class" {
  command = plan

  variables {
    storage    = ["express", "standard"]
    express_az = "use1-az4"
  }

  assert {
    condition     = jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS) == { express = "plan-test-123456789012--use1-az4--x-s3", standard = aws_s3_bucket.data.id }
    error_message = "LATENCY_BUCKETS must map each chosen storage class to its bucket."
  }
}
