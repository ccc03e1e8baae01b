# The function's execution role: read the stack's test objects and the seqread objects it
# declares, write and delete under the latency workload's prefix (when it measures standard) and
# the transfer workload's, consume the one queue, write the one log group.
# Nothing else.

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
      {
        # The transfer workload (transfer.tf): its own objects under transfer/, deleted by the
        # message that wrote them. Multipart uploads and copies are s3:PutObject (S3 authorises
        # CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload and CopyObject
        # with it; a copy's source with s3:GetObject); FAN's messages list the parts of their
        # shared upload (ListParts) and abort it on failure.
        Sid    = "TransferWorkloadObjects"
        Effect = "Allow"
        Action = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
        "s3:ListMultipartUploadParts"]
        Resource = local.transfer_object_arns
      },
      ], local.latency_standard ? [
      {
        # The latency workload (latency.tf): its own objects under latency/, deleted by the
        # message that wrote them. No s3:ListBucket: it deletes the keys it wrote. Only when it
        # measures standard; express has its own policy (express.tf).
        Sid      = "LatencyWorkloadObjects"
        Effect   = "Allow"
        Action   = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"]
        Resource = local.latency_object_arns
      },
      ] : [], length(local.seqread_object_arns) > 0 ? [
      {
        # The seqread workload (seqread.tf): read exactly the objects it declares, in the stack's
        # bucket and the remote bucket when there is one. None declared: no statement (IAM
        # refuses an empty Resource).
        Sid      = "SeqreadObjects"
        Effect   = "Allow"
        Action   = "s3:GetObject"
        Resource = local.seqread_object_arns
      },
    ] : [])
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
