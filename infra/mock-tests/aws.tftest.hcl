# The module's AWS branch (no endpoint), offline: the AWS provider is mocked, so no credentials
# and no network are needed, and the values checked are those the module computes.
#
# Run by tests/infra/test_module.py, or by hand in infra/ with Terraform >= 1.7:
#   terraform init -backend=false && terraform test -test-directory=mock-tests
# Not in the default tests/ directory: Terraform 1.6 reads that one on every init and does not
# know mock_provider, so a deploy with it would fail.

mock_provider "aws" {
  source = "./mock-tests/mocks"
}

# seqread.tf's provider in the remote region: configured even when it makes nothing.
mock_provider "aws" {
  alias  = "remote"
  source = "./mock-tests/mocks"
}

variables {
  stack = "plan-test"
  # Any existing file: the module only hashes it.
  zip_path = "versions.tf"
}

run "every_saved_query_is_a_query_definition_on_the_log_group" {
  command = plan

  # The generic queries (queries/) and each workload's (drivers/fanout/workloads/<name>/queries/).
  assert {
    condition     = length(fileset("..", "queries/*.logsinsights")) > 0 && length(fileset("..", "drivers/fanout/workloads/*/queries/*.logsinsights")) > 0 && length(aws_cloudwatch_query_definition.saved) == length(fileset("..", "queries/*.logsinsights")) + length(fileset("..", "drivers/fanout/workloads/*/queries/*.logsinsights"))
    error_message = "Every queries/*.logsinsights and drivers/fanout/workloads/*/queries/*.logsinsights file must become one query definition."
  }
  assert {
    condition = alltrue([
      for file, query in aws_cloudwatch_query_definition.saved :
      query.name == "${var.stack}/${trimsuffix(file, ".logsinsights")}" &&
      query.log_group_names == tolist([aws_cloudwatch_log_group.downloader.name]) &&
      query.query_string == file("../${one(setunion(fileset("..", "queries/${file}"), fileset("..", "drivers/fanout/workloads/*/queries/${file}")))}")
    ])
    error_message = "Each query definition must be named <stack>/<file stem>, hold the file's text and be scoped to the function's log group."
  }
  # Names (and addresses) as when every query was in queries/: a deployed stack keeps its definitions.
  assert {
    condition     = aws_cloudwatch_query_definition.saved["download-percentiles.logsinsights"].name == "plan-test/download-percentiles" && aws_cloudwatch_query_definition.saved["errors.logsinsights"].name == "plan-test/errors"
    error_message = "A workload's query and a generic one must keep their names, <stack>/<file stem>."
  }
}

run "the_queue_mapping_polls_within_the_reserved_concurrency" {
  command = plan

  variables {
    concurrency = 500
    batch_size  = 3
  }

  assert {
    condition     = aws_lambda_event_source_mapping.requests.enabled
    error_message = "On AWS the queue mapping must be enabled: nothing else consumes the queue."
  }
  assert {
    condition     = aws_lambda_event_source_mapping.requests.function_response_types == toset(["ReportBatchItemFailures"])
    error_message = "The mapping must report batch item failures."
  }
  assert {
    condition     = aws_lambda_event_source_mapping.requests.batch_size == var.batch_size
    error_message = "The mapping's batch size must be var.batch_size."
  }
  assert {
    condition     = aws_lambda_event_source_mapping.requests.scaling_config[0].maximum_concurrency == var.concurrency
    error_message = "The mapping's maximum concurrency must be the function's reserved concurrency."
  }
  assert {
    condition     = aws_lambda_function.downloader.reserved_concurrent_executions == var.concurrency
    error_message = "The function's reserved concurrency must be var.concurrency."
  }
}

run "a_concurrency_of_1_maps_to_the_mappings_minimum_of_2" {
  command = plan

  variables {
    concurrency = 1
  }

  assert {
    condition     = aws_lambda_event_source_mapping.requests.scaling_config[0].maximum_concurrency == max(2, var.concurrency)
    error_message = "maximum_concurrency must be max(2, concurrency): the service minimum is 2."
  }
}

run "tmp_holds_a_1_GiB_object_in_download_file_mode" {
  command = plan

  variables {
    object_size      = 1073741824
    default_strategy = "download_file"
  }

  # The rule variables.tf states: the object plus the module's headroom, at least 512 MB.
  assert {
    condition     = aws_lambda_function.downloader.ephemeral_storage[0].size == max(512, ceil(var.object_size / pow(1024, 2)) + local.tmp_headroom_mib)
    error_message = "The derived /tmp size must be the object plus headroom."
  }
  assert {
    condition     = output.ephemeral_storage == "auto"
    error_message = "A derived /tmp size must be recorded as auto, so that a redeploy keeps deriving it."
  }
  assert {
    condition     = aws_lambda_function.downloader.ephemeral_storage[0].size * pow(1024, 2) > var.object_size
    error_message = "/tmp must be larger than the object."
  }
}

run "an_explicit_tmp_size_is_kept_when_the_object_fits" {
  command = plan

  variables {
    object_size       = 1073741824
    ephemeral_storage = 4096
  }

  assert {
    condition     = aws_lambda_function.downloader.ephemeral_storage[0].size == var.ephemeral_storage
    error_message = "An explicit ephemeral_storage must be used as given."
  }
  assert {
    condition     = output.ephemeral_storage == "4096"
    error_message = "An explicit ephemeral_storage must be recorded as given, so that a redeploy keeps it."
  }
}

run "queues_logs_and_environment" {
  # Applied (against the mock) so that the dead-letter queue's ARN is known in the redrive policy.
  command = apply

  variables {
    timeout            = 120
    max_receive_count  = 7
    log_retention_days = 30
  }

  assert {
    condition     = aws_sqs_queue.requests.visibility_timeout_seconds == 6 * var.timeout
    error_message = "The queue's visibility timeout must be 6x the function timeout."
  }
  assert {
    condition = jsondecode(aws_sqs_queue.requests.redrive_policy) == {
      deadLetterTargetArn = aws_sqs_queue.dlq.arn
      maxReceiveCount     = var.max_receive_count
    }
    error_message = "The queue must redrive to the dead-letter queue after max_receive_count receives."
  }
  assert {
    condition     = aws_cloudwatch_log_group.downloader.retention_in_days == var.log_retention_days
    error_message = "The log group must keep logs for log_retention_days."
  }
  assert {
    condition     = aws_lambda_function.downloader.timeout == var.timeout && output.timeout == var.timeout
    error_message = "The function timeout must be var.timeout."
  }
  assert {
    condition     = output.endpoint == "" && output.max_receive_count == var.max_receive_count
    error_message = "Outputs must describe an AWS stack."
  }
}

run "the_role_reads_each_kept_test_object_and_nothing_else" {
  command = plan

  variables {
    object_size       = 8388608
    test_object_sizes = [1048576, 8388608, 67108864]
  }

  assert {
    condition = toset(jsondecode(aws_iam_role_policy.downloader.policy).Statement[0].Resource) == toset([
      for size in [1048576, 8388608, 67108864] : "arn:aws:s3:::plan-test-123456789012-us-east-1/objects/${size}-bytes.bin"
    ])
    error_message = "The role must allow s3:GetObject on exactly the stack's test objects."
  }
  assert {
    condition     = jsondecode(aws_iam_role_policy.downloader.policy).Statement[0].Action == "s3:GetObject"
    error_message = "The only S3 action must be s3:GetObject."
  }
}

run "without_kept_sizes_the_role_reads_only_the_current_object" {
  command = plan

  variables {
    object_size = 1048576
  }

  assert {
    condition     = jsondecode(aws_iam_role_policy.downloader.policy).Statement[0].Resource == ["arn:aws:s3:::plan-test-123456789012-us-east-1/objects/1048576-bytes.bin"]
    error_message = "Without test_object_sizes the role must read only the deployed object."
  }
}

run "keys_copies_are_read_and_nothing_else" {
  command = plan

  variables {
    object_size = 1048576
    keys        = 3
  }

  assert {
    condition = jsondecode(aws_iam_role_policy.downloader.policy).Statement[0].Resource == [
      "arn:aws:s3:::plan-test-123456789012-us-east-1/objects/1048576-bytes.bin",
      "arn:aws:s3:::plan-test-123456789012-us-east-1/copies/1/1048576-bytes.bin",
      "arn:aws:s3:::plan-test-123456789012-us-east-1/copies/2/1048576-bytes.bin",
    ]
    error_message = "With keys = 3 the role must read exactly the object and its two copies."
  }
  assert {
    condition     = jsondecode(aws_lambda_function.downloader.environment[0].variables.FANOUT_KEYS) == ["objects/1048576-bytes.bin", "copies/1/1048576-bytes.bin", "copies/2/1048576-bytes.bin"]
    error_message = "The function must get the copies' keys, the object first."
  }
}

run "keys_below_one_are_refused" {
  command = plan

  variables {
    object_size = 1048576
    keys        = 0
  }

  expect_failures = [var.keys]
}

run "the_latency_workload_writes_only_under_its_prefix" {
  command = plan

  variables {
    object_size = 1048576
  }

  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "LatencyWorkloadObjects"][0].Resource == [
      "arn:aws:s3:::plan-test-123456789012-us-east-1/latency/*"
    ]
    error_message = "The latency workload may write only under latency/ of the test bucket."
  }
  assert {
    condition = toset([for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "LatencyWorkloadObjects"][0].Action) == toset([
      "s3:PutObject", "s3:GetObject", "s3:DeleteObject"
    ])
    error_message = "The latency workload needs PutObject, GetObject and DeleteObject, nothing more."
  }
  assert {
    condition     = jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS) == { standard = aws_s3_bucket.data.id }
    error_message = "LATENCY_BUCKETS must map standard to the test bucket."
  }
}
