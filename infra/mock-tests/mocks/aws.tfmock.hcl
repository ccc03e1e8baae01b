# What the mocked AWS provider answers for the module's data sources; every other value it
# makes up. An account id must be 12 digits: the bucket name and ARNs are built from it.

mock_data "aws_caller_identity" {
  defaults = {
    account_id = "123456789012"
  }
}

mock_data "aws_partition" {
  defaults = {
    partition = "aws"
  }
}

# Zone IDs of us-east-1 (the express branch checks express_az against them).
mock_data "aws_availability_zones" {
  defaults = {
    zone_ids = ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"]
  }
}

# The provider validates ARNs it is given: the made-up ones must look like ARNs.
mock_resource "aws_iam_role" {
  defaults = {
    arn = "arn:aws:iam::123456789012:role/mock"
  }
}

mock_resource "aws_sqs_queue" {
  defaults = {
    arn = "arn:aws:sqs:us-east-1:123456789012:mock"
  }
}

mock_resource "aws_lambda_function" {
  defaults = {
    arn = "arn:aws:lambda:us-east-1:123456789012:function:mock"
  }
}
