"""What every report's PNG plots share, whatever the workload: their width and resolution, and
the caption that names the network the figures were made under (fanout.network.label): a
simulation must never pass for an AWS measurement.

matplotlib with the Agg backend: files only, no display needed (CI, SSH sessions).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from fanout import runs  # noqa: E402

DPI = 120
WIDTH = 9  # inches


def save(fig, path, network_label: str):
    """Write the figure with the network label as its caption, atomically (runs.replacing: the
    temporary name hides the format, hence given)."""
    fig.get_layout_engine().set(rect=(0, 0.04, 1, 0.96))
    fig.text(0.01, 0.01, network_label, fontsize="small", style="italic", color="tab:red")
    try:
        with runs.replacing(path) as tmp:
            fig.savefig(tmp, dpi=DPI, format=path.suffix.lstrip("."))
    finally:
        plt.close(fig)
    return path
