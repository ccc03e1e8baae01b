# The function's execution role: read the stack's test objects, consume the one queue, write the
# one log group, and what each workload's own file grants it (workloads.tf gathers them: the
# seqread objects it declares, writes and deletes under the latency workload's prefix when it
# measures standard and under the transfer workload's). Nothing else.

resource "aws_iam_role" "downloader" {
  name = local.role_name
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "lambda.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

locals {
  downloader_policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat([
      {
        # Both download modes need only this action: GetObject (stream) and the transfer
        # manager's HeadObject plus ranged GETs (download_file); S3 authorises HeadObject with
        # s3:GetObject. Without s3:ListBucket a missing object answers 403 instead of 404.
        Sid      = "ReadTestObjects"
        Effect   = "Allow"
        Action   = "s3:GetObject"
        Resource = local.object_arns
      },
      {
        # What the event source mapping does on the function's behalf (the actions of AWS's
        # AWSLambdaSQSQueueExecutionRole). Not sqs:ChangeMessageVisibility: a failed message
        # waits out its visibility timeout, which nothing here shortens (tests/e2e checks that
        # a run uses exactly the actions granted).
        Sid    = "ConsumeRequestQueue"
        Effect = "Allow"
        Action = [
          "sqs:ReceiveMessage",
          "sqs:DeleteMessage",
          "sqs:GetQueueAttributes",
        ]
        Resource = local.queue_arn
      },
      {
        # The log group is created by Terraform (lambda.tf), so no logs:CreateLogGroup; streams
        # are named by Lambda at run time, hence the wildcard within this one group.
        Sid      = "WriteOwnLogs"
        Effect   = "Allow"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = "${local.log_group_arn}:*"
      },
    ], local.workload_statements)
  })
  # IAM counts a role's inline policies together, whitespace excluded (jsonencode writes none):
  # at most 10,240 characters (docs/aws.md). Every object named is an ARN here; fanout deploy
  # refuses a seqread declaration that would not fit before this is planned.
  inline_policy_limit = 10240
  inline_policy_chars = length(local.downloader_policy) + (local.express ? length(local.express_policy) : 0)
}

resource "aws_iam_role_policy" "downloader" {
  name   = "least-privilege"
  role   = aws_iam_role.downloader.id
  policy = local.downloader_policy

  lifecycle {
    precondition {
      condition     = local.inline_policy_chars <= local.inline_policy_limit
      error_message = "The role's inline policies would take ${local.inline_policy_chars} characters (${length(jsonencode(local.seqread_object_arns))} of them the ${length(local.seqread_object_arns)} seqread objects' ARNs), over IAM's ${local.inline_policy_limit} per role: declare fewer seqread_objects, keys or test_object_sizes."
    }
  }
}
