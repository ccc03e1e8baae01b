# Bad inputs are refused at plan time, before anything is created: each run gives every variable
# it names a bad value of one kind, and each of them must fail. The AWS provider is mocked (see
# aws.tftest.hcl).

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
  }

  expect_failures = [
    var.memory, var.concurrency, var.object_size, var.ephemeral_storage, var.timeout, var.batch_size,
    var.max_receive_count, var.seqread_objects,
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
  }

  expect_failures = [
    var.stack, var.region, var.architecture, var.default_strategy, var.endpoint, var.log_retention_days,
    var.seqread_objects,
  ]
}

run "crt_only_without_a_custom_endpoint" {
  command = plan

  variables {
    endpoint         = "http://localhost:4566"
    default_strategy = "crt connections=8"
  }

  expect_failures = [aws_lambda_function.downloader]
}

run "object_too_large_for_tmp_in_download_file_mode" {
  command = plan

  variables {
    object_size = 10240 * pow(1024, 2)
  }

  expect_failures = [aws_lambda_function.downloader]
}

run "explicit_ephemeral_storage_too_small_for_the_object" {
  command = plan

  variables {
    object_size       = pow(1024, 3)
    ephemeral_storage = 1024
  }

  expect_failures = [aws_lambda_function.downloader]
}

run "storage_classes_and_zone_ids" {
  command = plan

  variables {
    storage    = ["standard", "glacier"]
    express_az = "us-east-1a"
  }

  expect_failures = [var.storage, var.express_az]
}

run "storage_not_empty" {
  command = plan

  variables {
    storage = []
  }

  expect_failures = [var.storage]
}
