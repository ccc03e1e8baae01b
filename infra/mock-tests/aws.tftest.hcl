# The module's AWS branch (no endpoint), offline: the AWS provider is mocked, so no credentials
# and no network are needed, and the values checked are those the module computes. Expected names
# are spelled out, not derived the way the module derives them.
#
# Run by tests/infra/test_module.py, or by hand in infra/ with Terraform >= 1.7:
#   terraform init -backend=false && terraform test -test-directory=mock-tests
# Not in the default tests/ directory: Terraform 1.6 reads that one on every init and does not
# know mock_provider, so a deploy with it would fail.
#
# One run per configuration, each checking everything that configuration decides: every run
# starts the provider plugin several times, which is most of what these tests cost. The runs
# share one state, as successive deploys of one stack do: the plan comes first, from no state;
# the applies follow (applied against the mock, so that the values the provider computes, such as
# ARNs, ids and the bucket's id in the function's environment, are known), the first of them
# recording who created the stack.

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

# S3 Standard only, one key, no seqread objects, no kept sizes: the saved queries, the queues,
# logs and environment, the role's reads, and the latency, transfer and owner parts.
run "first_apply_standard_only_one_object" {
  command = apply

  variables {
    object_size        = 1048576
    timeout            = 120
    max_receive_count  = 7
    log_retention_days = 30
  }

  # Saved queries: the generic ones (queries/) and each workload's (drivers/fanout/workloads/<name>/queries/).
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

  # Queues, logs and environment.
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

  # The role reads the deployed object only.
  assert {
    condition     = jsondecode(aws_iam_role_policy.downloader.policy).Statement[0].Resource == ["arn:aws:s3:::plan-test-123456789012-us-east-1/objects/1048576-bytes.bin"]
    error_message = "Without test_object_sizes the role must read only the deployed object."
  }

  # Express (express.tf): standard only has no directory bucket and no s3express permission.
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

  # Latency (latency.tf): the role writes only under latency/ of the stack's bucket, and
  # LATENCY_BUCKETS names standard only.
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
  assert {
    condition     = keys(jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS)) == ["standard"]
    error_message = "With standard only LATENCY_BUCKETS must name standard only."
  }
  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Resource if s.Sid == "LatencyWorkloadObjects"] == [
      ["arn:aws:s3:::plan-test-123456789012-us-east-1/latency/*"]
    ]
    error_message = "With standard the role must write under latency/ of the test bucket, in one statement."
  }

  # Transfer (transfer.tf): the role may write, read, delete, list the parts of and abort uploads
  # under transfer/ of the stack's bucket and nowhere else, and the bucket aborts multipart uploads
  # left incomplete and expires what transfer and latency write.
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
  assert {
    condition     = aws_s3_bucket_lifecycle_configuration.data.bucket == aws_s3_bucket.data.id
    error_message = "The lifecycle rule must be on the stack's bucket."
  }
  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.data.rule : r.abort_incomplete_multipart_upload[0].days_after_initiation if r.status == "Enabled" && length(r.abort_incomplete_multipart_upload) > 0] == [1]
    error_message = "One enabled rule must abort multipart uploads a day after they start."
  }
  assert {
    condition = { for r in aws_s3_bucket_lifecycle_configuration.data.rule : r.filter[0].prefix => r.expiration[0].days if r.status == "Enabled" && length(r.expiration) > 0 } == {
      "transfer/" = 1
      "latency/"  = 1
    }
    error_message = "Exactly the transfer/ and latency/ prefixes must expire, a day after their objects were written (the test objects never)."
  }

  # Who created the stack (owner.tf): the first apply records created_by.
  assert {
    condition     = output.created_by == "deploy"
    error_message = "A stack deployed without created_by must record deploy."
  }
}

# Both storage classes, a remote region without seqread objects, a large object in download_file
# mode and a high concurrency.
run "both_storage_classes_and_a_remote_region_without_seqread_objects" {
  command = apply

  variables {
    storage          = ["standard", "express"]
    express_az       = "use1-az4"
    remote_region    = "us-west-2"
    object_size      = 1073741824
    default_strategy = "download_file"
    concurrency      = 500
    batch_size       = 3
  }

  # The queue mapping polls within the reserved concurrency.
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

  # /tmp holds a 1 GiB object in download_file mode: the rule variables.tf states, the object plus
  # the module's headroom, at least 512 MB.
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

  # Express (express.tf): the directory bucket in its zone.
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

  # Latency (latency.tf): with both classes the role writes under latency/ and LATENCY_BUCKETS
  # names both buckets.
  assert {
    condition     = jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS) == { express = "plan-test-123456789012--use1-az4--x-s3", standard = aws_s3_bucket.data.id }
    error_message = "LATENCY_BUCKETS must map each chosen storage class to its bucket."
  }
  assert {
    condition     = keys(jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS)) == ["express", "standard"]
    error_message = "With both classes LATENCY_BUCKETS must name both."
  }
  assert {
    condition = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Resource if s.Sid == "LatencyWorkloadObjects"] == [
      ["arn:aws:s3:::plan-test-123456789012-us-east-1/latency/*"]
    ]
    error_message = "With standard among the classes the role must write under latency/ of the test bucket."
  }

  # Seqread (seqread.tf): a remote region without declared objects grants nothing of the workload.
  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s if s.Sid == "SeqreadObjects"] == [] && !strcontains(aws_iam_role_policy.downloader.policy, "seqread")
    error_message = "With no seqread_objects the role must read nothing of the workload (IAM refuses an empty Resource)."
  }
}

# Express only, with one seqread object, concurrency 1 and an explicit /tmp size.
run "express_only_with_a_seqread_object" {
  command = apply

  variables {
    storage           = ["express"]
    express_az        = "use1-az4"
    seqread_objects   = { "67108864" = 1 }
    concurrency       = 1
    object_size       = 1073741824
    ephemeral_storage = 4096
  }

  # A concurrency of 1 maps to the mapping's minimum of 2.
  assert {
    condition     = aws_lambda_event_source_mapping.requests.scaling_config[0].maximum_concurrency == max(2, var.concurrency)
    error_message = "maximum_concurrency must be max(2, concurrency): the service minimum is 2."
  }

  # An explicit /tmp size is kept when the object fits.
  assert {
    condition     = aws_lambda_function.downloader.ephemeral_storage[0].size == var.ephemeral_storage
    error_message = "An explicit ephemeral_storage must be used as given."
  }
  assert {
    condition     = output.ephemeral_storage == "4096"
    error_message = "An explicit ephemeral_storage must be recorded as given, so that a redeploy keeps it."
  }

  # Express (express.tf): the role may open sessions on that bucket only.
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

  # Latency (latency.tf): express only grants nothing on the test bucket.
  assert {
    condition     = keys(jsondecode(aws_lambda_function.downloader.environment[0].variables.LATENCY_BUCKETS)) == ["express"]
    error_message = "With express only LATENCY_BUCKETS must name express only."
  }
  assert {
    condition     = !strcontains(aws_iam_role_policy.downloader.policy, "latency/")
    error_message = "Without standard the role must not write or delete anything under latency/ (transfer/ is the transfer workload's)."
  }
  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.downloader.policy).Statement : s.Sid] == ["ReadTestObjects", "ConsumeRequestQueue", "WriteOwnLogs", "TransferWorkloadObjects", "SeqreadObjects"]
    error_message = "Without standard the main policy must have no latency statement: exactly its download, queue, log, transfer and seqread ones."
  }
}

# Seqread objects in the stack's bucket and a remote region's, and kept test objects: with
# remote_region the bucket is made through the provider alias in that region, encrypted, private
# and TLS-only; the role reads exactly the declared objects of each bucket and the kept test
# objects, and nothing more.
run "seqread_objects_in_a_remote_region_and_kept_test_objects" {
  command = apply

  variables {
    remote_region     = "us-west-2"
    seqread_objects   = { "67108864" = 1, "1048576" = 2 }
    object_size       = 8388608
    test_object_sizes = [1048576, 8388608, 67108864]
  }

  # The role reads each kept test object and nothing else.
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

  # Seqread (seqread.tf).
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

# A later apply, by a sweep, of a stack with key copies and seqread objects in its own bucket only.
run "a_later_apply_by_a_sweep_with_key_copies" {
  command = apply

  variables {
    created_by      = "sweep"
    object_size     = 1048576
    keys            = 3
    seqread_objects = { "67108864" = 3 }
  }

  # Who created the stack (owner.tf): a later apply with another value keeps the first.
  assert {
    condition     = output.created_by == "deploy"
    error_message = "A redeploy must not change who created the stack."
  }

  # The keys' copies are read and nothing else.
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

  # Seqread (seqread.tf): without remote_region nothing is created (the previous run's remote
  # bucket goes) and only the stack's bucket is read.
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
