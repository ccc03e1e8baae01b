"""The local backend: the AWS emulator, the function host that runs the zip, the network model of Lambda."""
