# The two kinds of endpoint: the local backend's embedded emulator (moto), whose differences
# follow var.embedded_emulator, and any other emulator (LocalStack...), which gets the AWS
# configuration. The AWS provider is mocked; see aws.tftest.hcl.

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
  endpoint = "http://127.0.0.1:4566"
}

run "the_embedded_emulator_gets_a_disabled_mapping_and_no_saved_queries" {
  command = plan

  variables {
    embedded_emulator = true
  }

  assert {
    condition     = !aws_lambda_event_source_mapping.requests.enabled
    error_message = "On the embedded emulator the local function host polls: the mapping must be disabled."
  }
  assert {
    condition     = length(aws_cloudwatch_query_definition.saved) == 0
    error_message = "moto lacks PutQueryDefinition: no saved queries on the embedded emulator."
  }
}

run "another_emulator_gets_what_aws_gets" {
  command = plan

  assert {
    condition     = aws_lambda_event_source_mapping.requests.enabled
    error_message = "An endpoint alone must not disable the mapping: nothing else would consume the queue."
  }
  assert {
    condition     = length(aws_cloudwatch_query_definition.saved) == length(fileset("..", "queries/*.logsinsights")) + length(fileset("..", "drivers/fanout/workloads/*/queries/*.logsinsights"))
    error_message = "An endpoint alone must not skip the saved queries."
  }
}

run "the_endpoint_can_come_from_the_environment" {
  # fanout sets AWS_ENDPOINT_URL and endpoint_in_environment: the module must not depend on the
  # provider's endpoints block for anything else.
  command = plan

  variables {
    embedded_emulator       = true
    endpoint_in_environment = true
  }

  assert {
    condition     = output.endpoint == var.endpoint && !aws_lambda_event_source_mapping.requests.enabled
    error_message = "With the endpoint in the environment the module must plan what it plans with the endpoints block."
  }
}
