# Terraform and provider versions, and the one provider configuration.
#
# The same module deploys to AWS or to an emulator: with var.endpoint set, every service the
# module uses is pointed at that endpoint with fixed test credentials, so real credentials are
# never sent to it. Without it the normal credential chain applies (AWS_PROFILE, environment, SSO).
# What only the project's embedded emulator needs (see var.embedded_emulator) does not follow
# from the endpoint: another emulator, such as LocalStack, gets the AWS configuration.

terraform {
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }

  # State location is given at init time (-backend-config=path=...) so that every backend and
  # stack keeps its own state file. Teams can replace this with a remote backend.
  backend "local" {}
}

locals {
  custom_endpoint = var.endpoint != ""
}

provider "aws" {
  region = var.region

  access_key                  = local.custom_endpoint ? "test" : null
  secret_key                  = local.custom_endpoint ? "test" : null
  s3_use_path_style           = local.custom_endpoint
  skip_credentials_validation = local.custom_endpoint
  skip_metadata_api_check     = local.custom_endpoint
  skip_region_validation      = local.custom_endpoint
  # An emulator answers unimplemented calls with HTTP 500, which the SDK would otherwise retry
  # with back-off for many minutes before reporting the error.
  max_retries = local.custom_endpoint ? 2 : null

  # Left out when the caller passes the endpoint in Terraform's environment instead
  # (var.endpoint_in_environment): the provider validates this block slowly.
  dynamic "endpoints" {
    for_each = local.custom_endpoint && !var.endpoint_in_environment ? [var.endpoint] : []
    content {
      iam    = endpoints.value
      lambda = endpoints.value
      logs   = endpoints.value
      s3     = endpoints.value
      sqs    = endpoints.value
      sts    = endpoints.value
    }
  }

  default_tags {
    tags = merge(var.tags, { project = "s3-fanout", stack = var.stack })
  }
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}
