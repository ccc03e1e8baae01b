# The downloader function, its log group and the SQS trigger.

locals {
  # download_file writes the whole object to /tmp; leave room for the transfer manager's
  # temporary file name and filesystem overhead. fanout/params.py applies the same rule
  # (TMP_HEADROOM_MIB) to reject objects that cannot fit before Terraform runs.
  tmp_headroom_mib = 64
  object_mib       = ceil(var.object_size / 1048576)
  ephemeral_storage = coalesce(
    var.ephemeral_storage,
    # Sized for the object whatever the default strategy: a message may ask for download_file.
    min(10240, max(512, local.object_mib + local.tmp_headroom_mib)),
  )
}

# Created here, not by Lambda on first write, so that it has a retention and destroy removes it.
resource "aws_cloudwatch_log_group" "downloader" {
  #checkov:skip=CKV_AWS_158: the records are timing numbers, no secrets; CloudWatch encrypts them at rest already, and a KMS key would add a key policy and a cost per stack
  #checkov:skip=CKV_AWS_338: measurement logs; retention is var.log_retention_days (14 by default) and `fanout report` keeps every record under results/
  name              = local.log_group
  retention_in_days = var.log_retention_days
}

resource "aws_lambda_function" "downloader" {
  #checkov:skip=CKV_AWS_116: SQS invokes the function synchronously; failed messages go to the queue's redrive DLQ (sqs.tf), Lambda's own DLQ serves only asynchronous invocations
  #checkov:skip=CKV_AWS_117: a VPC changes the network path being measured (ENIs, NAT or gateway endpoint between the function and S3)
  #checkov:skip=CKV_AWS_272: the zip is built deterministically from this repository by the same user who deploys it; code signing needs AWS Signer, which no emulator offers
  #checkov:skip=CKV_AWS_173: the variables hold bucket names, key, size and the workloads' settings (download's default strategy), no secrets; Lambda encrypts them at rest with its service key
  #checkov:skip=CKV_AWS_50: X-Ray tracing adds work and cost to every invocation of a latency measurement; the records carry their own timings
  function_name = local.function_name
  role          = aws_iam_role.downloader.arn
  runtime       = "python3.12"
  handler       = "handler.lambda_handler"
  architectures = [var.architecture]
  filename      = var.zip_path
  # The zip is built deterministically, so this changes only when the code does.
  source_code_hash = filebase64sha256(var.zip_path)

  memory_size                    = var.memory
  timeout                        = var.timeout
  reserved_concurrent_executions = var.concurrency

  ephemeral_storage {
    size = local.ephemeral_storage
  }

  environment {
    # Those every message reads, and the workloads' own (workloads.tf).
    variables = merge({
      FANOUT_BUCKET            = aws_s3_bucket.data.id
      FANOUT_KEY               = local.object_key
      FANOUT_KEYS              = jsonencode(local.copy_keys)
      FANOUT_EXPECTED_SIZE     = tostring(var.object_size)
      FANOUT_CONCURRENCY_LIMIT = tostring(var.concurrency)
      FANOUT_ENVIRONMENT_EPOCH = var.environment_epoch
      POWERTOOLS_SERVICE_NAME  = "s3-fanout"
      POWERTOOLS_LOG_LEVEL     = "INFO"
    }, local.workload_environment)
  }

  lifecycle {
    # The download workload's default strategy (download.tf), which the function is deployed with:
    # crt's client ignores custom endpoints and would read from AWS instead
    # (fanout.workloads.download.strategies); download_file needs the object in /tmp.
    precondition {
      condition     = local.download_strategy_name != "crt" || !local.custom_endpoint
      error_message = "default_strategy crt runs only against AWS: boto3's CRT client ignores a custom endpoint."
    }
    precondition {
      condition     = !local.download_writes_tmp || local.object_mib + local.tmp_headroom_mib <= 10240
      error_message = "With default strategy download_file the object must fit in /tmp (at most 10240 MB including ${local.tmp_headroom_mib} MB headroom); use default_strategy = \"stream\" or \"ranged\"."
    }
    precondition {
      condition     = var.ephemeral_storage == null ? true : (!local.download_writes_tmp || var.ephemeral_storage >= local.object_mib + local.tmp_headroom_mib)
      error_message = "ephemeral_storage (${local.ephemeral_storage} MB) cannot hold the object for default strategy download_file: it needs ${local.object_mib + local.tmp_headroom_mib} MB (the object plus ${local.tmp_headroom_mib} MB headroom)."
    }
  }

  # Otherwise Lambda could create the log group first (without retention) on an early invocation.
  depends_on = [aws_cloudwatch_log_group.downloader]
}

resource "aws_lambda_event_source_mapping" "requests" {
  event_source_arn        = aws_sqs_queue.requests.arn
  function_name           = aws_lambda_function.downloader.arn
  batch_size              = var.batch_size
  function_response_types = ["ReportBatchItemFailures"]
  # On the embedded emulator the project's function host polls the queue: moto's own poller
  # would consume the messages itself (and cannot run the function without containers).
  enabled = !var.embedded_emulator

  # Without this cap the poller ignores reserved concurrency, gets throttled, and throttled
  # messages can end in the dead-letter queue. The service minimum is 2.
  scaling_config {
    maximum_concurrency = max(2, var.concurrency)
  }

  lifecycle {
    precondition {
      condition     = !var.embedded_emulator || local.custom_endpoint
      error_message = "embedded_emulator needs the emulator's endpoint: on AWS the mapping must be enabled."
    }
  }

  # Lambda checks at creation that the role may read the queue.
  depends_on = [aws_iam_role_policy.downloader]
}
