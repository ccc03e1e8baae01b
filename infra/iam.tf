# The function's execution role: read the stack's test objects, write and delete under the latency
# workload's prefix (when it measures standard) and the transfer workload's, consume the one
# queue, write the one log group.
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

resource "aws_iam_role_policy" "downloader" {
  name = "least-privilege"
  role = aws_iam_role.downloader.id
  policy = jsonencode({
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
      ] : [], [
      {
        # The seqread workload (seqread.tf): read its objects under seqread/ of the stack's
        # bucket and of the remote bucket when there is one.
        Sid      = "SeqreadObjects"
        Effect   = "Allow"
        Action   = "s3:GetObject"
        Resource = local.seqread_object_arns
      },
    ])
  })
}
