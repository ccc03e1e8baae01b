# Who created the stack: `fanout deploy` (a stack of the user's) or a sweep or study (a stack of
# their own, which they redeploy at every cell and may destroy). The first apply records
# var.created_by in the state and later applies never change it, so a sweep can refuse to
# redeploy a stack the user deployed by hand (drivers/fanout/cloud/owner.py), whatever name it
# is given. Destroy removes the record with the stack.
resource "terraform_data" "created_by" {
  input = var.created_by

  lifecycle {
    ignore_changes = [input]
  }
}
