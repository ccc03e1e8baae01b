"""What the Lambda Python runtime offers a handler besides the standard library, and no more.

The python3.12 runtime ships boto3 and its dependencies; a handler that needs anything else
must bring it in its zip. Environments are forked from the host's interpreter, whose
site-packages hold much more (rich, moto, the host itself), so a handler that works here could
fail on AWS. Environments therefore import from the task root, then a view of only these
distributions (a directory of links into the host's site-packages, built once per host run),
then the standard library; sandbox.py also forgets the host's other modules.
"""

import importlib.metadata
from pathlib import Path

DISTRIBUTIONS = ("boto3", "botocore", "s3transfer", "jmespath", "urllib3", "python-dateutil", "six")


def build_view(directory: Path) -> None:
    """Link each distribution's top-level packages, modules and metadata into `directory`
    (metadata too, so importlib.metadata.version("boto3") works in a handler, as on AWS)."""
    directory.mkdir()
    for name in DISTRIBUTIONS:
        distribution = importlib.metadata.distribution(name)
        for top in {file.parts[0] for file in distribution.files or ()} - {"..", "__pycache__"}:
            (directory / top).symlink_to(str(distribution.locate_file(top)))


def module_names(directory: str) -> set[str]:
    """The top-level module names a view provides."""
    return {path.name.removesuffix(".py") for path in Path(directory).iterdir() if path.suffix != ".dist-info"}
