# Least privilege for the latency workload, checked offline against the mocked AWS provider (see
# aws.tftest.hcl): the role may write under latency/ of the stack's bucket only when the workload
# measures standard there, and LATENCY_BUCKETS names exactly the classes chosen. Expected names
# are spelled out, not derived the way latency.tf derives them. Applied against the mock, so that
# the function's environment (it holds the bucket's id) is known.

mock_provider "aws" {
  source = "./mock-tests/mocks"
}

# seqread.tf's provider in the remote region: configured even when it makes nothing.
mock_provider "aws" {
  alias  = "remote"
  source = "./mock-tests/mocks"
}

variables {
  stack    = "plan-test"
  zip_path = "versions.tf"
}

run "standard_only_may_write_under_the_prefix" {
  command = apply

  variables {
    storage = ["standard"]
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
}

run "express_only_grants_nothing_on_the_test_bucket" {
  command = apply

  variables {
    storage         = ["express"]
    express_az      = "use1-az4"
    seqread_objects = { "67108864" = 1 }
  }

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

run "both_grant_the_prefix_and_name_both_buckets" {
  command = apply

  variables {
    storage    = ["standard", "express"]
    express_az = "use1-az4"
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
}
