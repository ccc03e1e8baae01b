# Bad inputs are refused at plan time, before anything is created: each run gives every variable
# it names a bad value of one kind, and each of them must fail. A run may also break several
# preconditions if they are on resources none of which depends on another (Terraform then plans
# each and reports every failure; a resource downstream of a failed one would not be planned),
# and never two of one resource: expect_failures names resources, not their preconditions. The
# AWS provider is mocked (see aws.tftest.hcl).

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

run "values_below_the_limits" {
  command = plan

  variables {
    memory            = 127
    concurrency       = 0
    object_size       = 0
    ephemeral_storage = 511
    timeout           = 0
    batch_size        = 0
    max_receive_count = 4
    seqread_objects   = { "1024" = 0 } # jobs
    keys              = 0
    storage           = [] # at least one class
  }

  expect_failures = [
    var.memory, var.concurrency, var.object_size, var.ephemeral_storage, var.timeout, var.batch_size,
    var.max_receive_count, var.seqread_objects, var.keys, var.storage,
  ]
}

run "values_above_the_limits" {
  command = plan

  variables {
    memory            = 10241
    concurrency       = 1001
    object_size       = 10000 * 5 * pow(1024, 3) + 1 # S3's maximum object size, plus one byte
    default_strategy  = "stream"
    ephemeral_storage = 10241
    timeout           = 901
    batch_size        = 11
    max_receive_count = 1001
    seqread_objects   = { "5368709121" = 1 } # a file over 5 GiB
  }

  expect_failures = [
    var.memory, var.concurrency, var.object_size, var.ephemeral_storage, var.timeout, var.batch_size,
    var.max_receive_count, var.seqread_objects,
  ]
}

run "values_not_whole" {
  command = plan

  variables {
    memory            = 1024.5
    concurrency       = 1.5
    object_size       = 1.5
    ephemeral_storage = 1024.5
    timeout           = 1.5
    batch_size        = 1.5
    max_receive_count = 5.5
    seqread_objects   = { "1024" = 1.5 }
  }

  expect_failures = [
    var.memory, var.concurrency, var.object_size, var.ephemeral_storage, var.timeout, var.batch_size,
    var.max_receive_count, var.seqread_objects,
  ]
}

run "names_not_allowed" {
  command = plan

  variables {
    stack              = "Upper"
    region             = "mars"
    architecture       = "arm"
    default_strategy   = "mmap"
    endpoint           = "localhost:4566"
    log_retention_days = 2
    seqread_objects    = { "64MiB" = 1 } # sizes are in bytes
    created_by         = "someone"
    remote_region      = "Mars"
    storage            = ["standard", "glacier"]
    express_az         = "us-east-1a" # a zone name, not a zone ID
  }

  expect_failures = [
    var.stack, var.region, var.architecture, var.default_strategy, var.endpoint, var.log_retention_days,
    var.seqread_objects, var.created_by, var.remote_region, var.storage, var.express_az,
  ]
}

# The function's preconditions (lambda.tf), one run each; the directory bucket's (express.tf), the
# role policy's (iam.tf) and the queue mapping's (lambda.tf) share them. The function depends on
# none of those three, the mapping depends on the function and the role policy.
run "crt_with_an_endpoint_and_express_without_a_zone" {
  command = plan

  variables {
    endpoint         = "http://localhost:4566"
    default_strategy = "crt connections=8"
    storage          = ["standard", "express"]
  }

  expect_failures = [aws_lambda_function.downloader, aws_s3_directory_bucket.express]
}

# 128 objects in 2 buckets: 256 ARNs of about 76 characters, over IAM's 10,240.
run "object_too_large_for_tmp_and_a_seqread_declaration_over_the_policy_size" {
  command = plan

  variables {
    object_size     = 10240 * pow(1024, 2)
    remote_region   = "us-west-2"
    seqread_objects = { "67108864" = 64, "1073741824" = 64 }
  }

  expect_failures = [aws_lambda_function.downloader, aws_iam_role_policy.downloader]
}

run "explicit_ephemeral_storage_too_small_for_the_object" {
  command = plan

  variables {
    object_size       = pow(1024, 3)
    ephemeral_storage = 1024
  }

  expect_failures = [aws_lambda_function.downloader]
}

run "the_embedded_emulator_without_an_endpoint_and_express_in_a_zone_of_another_region" {
  command = plan

  variables {
    embedded_emulator = true
    storage           = ["express"]
    express_az        = "usw2-az1"
  }

  expect_failures = [aws_lambda_event_source_mapping.requests, aws_s3_directory_bucket.express]
}
