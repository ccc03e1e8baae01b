# Every saved query becomes a CloudWatch Logs Insights query definition, in a console folder
# named after the stack and scoped to the function's log group. The generic queries live in
# queries/, each workload's in its folder (drivers/fanout/workloads/<name>/queries/): the globs
# of fanout.common.paths.QUERY_GLOBS, which tests/insights/test_saved_queries.py holds equal to
# these. A query's name is its file's, wherever the file is: the map is keyed by file name (two
# files of one name are a "Duplicate object key" error), so the definitions' names and addresses
# are those they had when every query was in queries/.
#
# Skipped on the embedded emulator: moto does not implement PutQueryDefinition. The local
# backend evaluates the same files directly.

locals {
  repo_dir    = "${path.module}/.."
  query_globs = ["queries/*.logsinsights", "drivers/fanout/workloads/*/queries/*.logsinsights"]
  query_files = {
    for file in flatten([for glob in local.query_globs : tolist(fileset(local.repo_dir, glob))]) :
    basename(file) => file if !var.embedded_emulator
  }
}

resource "aws_cloudwatch_query_definition" "saved" {
  for_each = local.query_files

  name            = "${var.stack}/${trimsuffix(each.key, ".logsinsights")}"
  query_string    = file("${local.repo_dir}/${each.value}")
  log_group_names = [aws_cloudwatch_log_group.downloader.name]
}
