# Every saved query in queries/ becomes a CloudWatch Logs Insights query definition, in a
# console folder named after the stack and scoped to the function's log group.
#
# Skipped on the embedded emulator: moto does not implement PutQueryDefinition. The local
# backend evaluates the same files directly.

locals {
  queries_dir = "${path.module}/../queries"
  query_files = var.embedded_emulator ? toset([]) : fileset(local.queries_dir, "*.logsinsights")
}

resource "aws_cloudwatch_query_definition" "saved" {
  for_each = local.query_files

  name            = "${var.stack}/${trimsuffix(each.value, ".logsinsights")}"
  query_string    = file("${local.queries_dir}/${each.value}")
  log_group_names = [aws_cloudwatch_log_group.downloader.name]
}
