# Who created the stack (owner.tf), offline against the mocked AWS provider (see aws.tftest.hcl):
# the first apply records created_by, a later apply with another value keeps the first, and a
# value other than deploy or sweep is refused at plan.

mock_provider "aws" {
  source = "./mock-tests/mocks"
}

mock_provider "aws" {
  alias  = "remote"
  source = "./mock-tests/mocks"
}

variables {
  stack    = "plan-test"
  zip_path = "versions.tf"
}

run "a_stack_made_by_hand_records_deploy" {
  command = apply

  assert {
    condition     = output.created_by == "deploy"
    error_message = "A stack deployed without created_by must record deploy."
  }
}

run "a_later_apply_keeps_the_first_creator" {
  command = apply

  variables {
    created_by = "sweep"
  }

  assert {
    condition     = output.created_by == "deploy"
    error_message = "A redeploy must not change who created the stack."
  }
}

run "created_by_is_deploy_or_sweep" {
  command = plan

  variables {
    created_by = "someone"
  }

  expect_failures = [var.created_by]
}
