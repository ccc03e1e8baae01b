# The request queue the function consumes, and its dead-letter queue.
#
# The request queue must be created after the dead-letter queue (SQS rejects a redrive policy
# whose target does not exist), and the provider confirms each new queue's attributes for about
# 25 s: these two queues are the critical path of a deploy, so nothing else depends on them
# except the event source mapping (names.tf gives the IAM policy their ARNs).

resource "aws_sqs_queue" "dlq" {
  name                      = local.dlq_name
  message_retention_seconds = 1209600 # the maximum, 14 days: failed requests stay inspectable
  sqs_managed_sse_enabled   = true
}

resource "aws_sqs_queue" "requests" {
  name                    = local.queue_name
  sqs_managed_sse_enabled = true
  # A message must not reappear while an invocation may still be working on it, including
  # retries after throttling: AWS recommends at least 6x the function timeout.
  visibility_timeout_seconds = 6 * var.timeout
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
}
