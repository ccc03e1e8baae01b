"""The local backend's model of Lambda's network, and the proxy that applies it (docs/network-model.md)."""

from fanout.local.network.model import NONE, PROFILES, ModelError, NetworkModel, Shape, label, load, shapes_uploads

__all__ = ["NONE", "PROFILES", "ModelError", "NetworkModel", "Shape", "label", "load", "shapes_uploads"]
