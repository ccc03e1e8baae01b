"""s3-fanout drivers: the code behind the `fanout` console script and the Makefile."""
