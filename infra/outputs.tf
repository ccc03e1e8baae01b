# The stack's API: fanout.cloud.stack.Stack has exactly these fields. Drivers read names from here and
# never derive them.

output "region" {
  description = "AWS region of the stack."
  value       = var.region
}

output "endpoint" {
  description = "Emulator endpoint URL; empty on AWS."
  value       = var.endpoint
}

output "stack" {
  description = "Stack name."
  value       = var.stack
}

output "created_by" {
  description = "What created the stack, deploy or sweep, as the first apply recorded it (owner.tf)."
  value       = terraform_data.created_by.output
}

output "bucket" {
  description = "Bucket holding the test object."
  value       = aws_s3_bucket.data.id
}

output "object_key" {
  description = "Key of the test object."
  value       = local.object_key
}

output "object_keys" {
  description = "Keys of the test object's copies (KEYS), the first being object_key; the function reads copy seq mod their number."
  value       = local.copy_keys
}

output "object_size" {
  description = "Size of the test object in bytes."
  value       = var.object_size
}

output "queue_url" {
  description = "URL of the request queue the function consumes."
  value       = aws_sqs_queue.requests.url
}

output "queue_arn" {
  description = "ARN of the request queue."
  value       = aws_sqs_queue.requests.arn
}

output "dlq_url" {
  description = "URL of the dead-letter queue."
  value       = aws_sqs_queue.dlq.url
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue."
  value       = aws_sqs_queue.dlq.arn
}

output "function_name" {
  description = "Name of the downloader function."
  value       = aws_lambda_function.downloader.function_name
}

output "log_group" {
  description = "Log group of the downloader function, where the timing records go."
  value       = aws_cloudwatch_log_group.downloader.name
}

output "concurrency" {
  description = "Reserved concurrency of the function."
  value       = aws_lambda_function.downloader.reserved_concurrent_executions
}

output "memory" {
  description = "Function memory in MB."
  value       = aws_lambda_function.downloader.memory_size
}

output "timeout" {
  description = "Function timeout in seconds."
  value       = aws_lambda_function.downloader.timeout
}

output "ephemeral_storage" {
  description = "EPHEMERAL_STORAGE as deployed: /tmp in MB, or auto (sized from the object plus headroom)."
  value       = var.ephemeral_storage == null ? "auto" : tostring(var.ephemeral_storage)
}

output "batch_size" {
  description = "Messages per invocation."
  value       = aws_lambda_event_source_mapping.requests.batch_size
}

output "max_receive_count" {
  description = "Receives before a message moves to the dead-letter queue."
  value       = var.max_receive_count
}

output "architecture" {
  description = "Instruction set of the function."
  value       = var.architecture
}

output "sdk" {
  description = "Where the function's boto3 comes from: bundled (the zip) or runtime."
  value       = var.sdk
}
