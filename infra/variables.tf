# Inputs of the experiment stack. Validation here mirrors fanout/params.py so that the module
# also rejects bad values when used on its own, before anything is created.

variable "stack" {
  description = "Stack name; prefixes every resource name. Lowercase letters, digits and hyphens, starting with a letter, at most 30 characters (the bucket name adds the account id and region and must stay within 63)."
  type        = string
  default     = "s3fanout"

  validation {
    condition     = can(regex("^[a-z]([a-z0-9-]{0,28}[a-z0-9])?$", var.stack))
    error_message = "stack must be 1-30 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen."
  }
}

variable "created_by" {
  description = "What creates the stack: deploy (a user's `make deploy`) or sweep (a sweep's or study's own stack). Recorded by the first apply only (owner.tf)."
  type        = string
  default     = "deploy"

  validation {
    condition     = contains(["deploy", "sweep"], var.created_by)
    error_message = "created_by must be deploy or sweep."
  }
}

variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "us-east-1"

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", var.region))
    error_message = "region must look like us-east-1."
  }
}

variable "endpoint" {
  description = "Endpoint URL of an AWS emulator (the embedded one, or another such as LocalStack); empty for AWS. It only redirects the provider, with test credentials, path-style S3 and few retries."
  type        = string
  default     = ""

  validation {
    condition     = var.endpoint == "" || can(regex("^https?://[^/\\s]+(/\\S*)?$", var.endpoint))
    error_message = "endpoint must be empty (AWS) or an http(s) URL such as http://localhost:4566."
  }
}

variable "endpoint_in_environment" {
  description = "True when whoever runs Terraform also sets AWS_ENDPOINT_URL to var.endpoint in its environment (fanout does); the provider's endpoints block is then left out. The AWS provider's plugin framework validates that block slowly: about 7 s of CPU each time the provider is configured, twice per apply, which made every local redeploy slower than the change it applied. Leave false when running the module on its own with an endpoint."
  type        = bool
  default     = false
}

variable "embedded_emulator" {
  description = "True only for the local backend's embedded emulator (moto), at var.endpoint. Its queue mapping is created disabled, because the project's local function host polls the queue (moto's own poller would consume the messages without being able to run the function), and the saved queries are skipped, because moto does not implement PutQueryDefinition. Other emulators get the same resources as AWS."
  type        = bool
  default     = false
}

variable "zip_path" {
  description = "Path of the downloader function's deployment zip."
  type        = string
}

variable "object_size" {
  description = "Size in bytes of the test object every invocation downloads."
  type        = number
  default     = 268435456

  validation {
    condition     = var.object_size >= 1 && floor(var.object_size) == var.object_size
    error_message = "object_size must be a whole number of bytes, at least 1."
  }

  # S3's largest object: a multipart upload of 10,000 parts of at most 5 GiB (48.8 TiB).
  validation {
    condition     = var.object_size <= 10000 * 5 * pow(1024, 3)
    error_message = "object_size must be at most 53687091200000 bytes (48.8 TiB), S3's maximum object size."
  }
}

variable "test_object_sizes" {
  description = "Sizes in bytes of every test object the stack keeps in its bucket (a sweep over object sizes uploads each once and keeps it). The function's role may read each of these objects and nothing else; object_size is always included."
  type        = list(number)
  default     = []

  validation {
    condition     = alltrue([for size in var.test_object_sizes : size >= 1 && floor(size) == size && size <= 10000 * 5 * pow(1024, 3)])
    error_message = "test_object_sizes must hold whole numbers of bytes from 1 to 53687091200000 (48.8 TiB)."
  }
}

variable "environment_epoch" {
  description = "Any text; changing it changes the function's configuration, so Lambda replaces every execution environment. The sweep sets it per cell to start each cell without warm environments."
  type        = string
  default     = ""
}

variable "concurrency" {
  description = "Reserved concurrency of the function: how many copies read the object at once. The queue mapping's maximum_concurrency follows it but cannot go below 2, so at 1 the mapping may start a second invocation that the function's limit throttles: that message returns to the queue and, after max_receive_count such receives, lands in the dead-letter queue. Use at least 2 when no message may be lost to throttling."
  type        = number
  default     = 10

  validation {
    condition     = var.concurrency >= 1 && var.concurrency <= 1000 && floor(var.concurrency) == var.concurrency
    error_message = "concurrency must be a whole number from 1 to 1000."
  }
}

variable "memory" {
  description = "Function memory in MB (CPU and network share scale with it)."
  type        = number
  default     = 1024

  validation {
    condition     = var.memory >= 128 && var.memory <= 10240 && floor(var.memory) == var.memory
    error_message = "memory must be a whole number of MB from 128 to 10240."
  }
}

variable "timeout" {
  description = "Function timeout in seconds. The queue's visibility timeout is derived from it (6x)."
  type        = number
  default     = 300

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 900 && floor(var.timeout) == var.timeout
    error_message = "timeout must be a whole number of seconds from 1 to 900."
  }
}

variable "ephemeral_storage" {
  description = "Size of /tmp in MB (512-10240). When null it is derived from object_size: the object plus headroom, whatever the default strategy (a message may ask for download_file). With default strategy download_file an explicit value must hold the object plus the same headroom."
  type        = number
  default     = null

  validation {
    condition     = var.ephemeral_storage == null ? true : (var.ephemeral_storage >= 512 && var.ephemeral_storage <= 10240 && floor(var.ephemeral_storage) == var.ephemeral_storage)
    error_message = "ephemeral_storage must be a whole number of MB from 512 to 10240."
  }
}

variable "architecture" {
  description = "Instruction set of the function: x86_64 or arm64."
  type        = string
  default     = "x86_64"

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "architecture must be x86_64 or arm64."
  }
}

variable "keys" {
  description = "How many copies of the test object, each under its own prefix, the messages are spread over (seq mod keys)."
  type        = number
  default     = 1

  validation {
    condition     = var.keys >= 1 && var.keys <= 100 && floor(var.keys) == var.keys
    error_message = "keys must be a whole number from 1 to 100."
  }
}

variable "sdk" {
  description = "Where the function's boto3 comes from: bundled (the zip's pinned SDK) or runtime (the Lambda runtime's). The driver builds the zip accordingly; here it is recorded."
  type        = string
  default     = "bundled"

  validation {
    condition     = contains(["bundled", "runtime"], var.sdk)
    error_message = "sdk must be bundled or runtime."
  }
}

variable "batch_size" {
  description = "Messages per invocation. Above 10 SQS needs a batching window, which would blur the timings, so 10 is the limit."
  type        = number
  default     = 1

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10 && floor(var.batch_size) == var.batch_size
    error_message = "batch_size must be a whole number from 1 to 10."
  }
}

variable "max_receive_count" {
  description = "Receives before a message moves to the dead-letter queue. At least 5 so that throttling alone does not dead-letter messages."
  type        = number
  default     = 5

  validation {
    condition     = var.max_receive_count >= 5 && var.max_receive_count <= 1000 && floor(var.max_receive_count) == var.max_receive_count
    error_message = "max_receive_count must be a whole number from 5 to 1000."
  }
}

variable "log_retention_days" {
  description = "Retention of the function's log group, in days (a value CloudWatch Logs accepts)."
  type        = number
  default     = 14

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653."
  }
}

variable "tags" {
  description = "Extra tags for every resource (project and stack tags are always added)."
  type        = map(string)
  default     = {}
}

