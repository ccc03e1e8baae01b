"""The cloud side: Terraform, the deployed stack, deploy parameters, prices, account and credentials, the zip."""
