"""Synchronized SpatialBN (placeholder until the multi-batch SpatialBN ops land)."""
from hetnet._errors import UnsupportedError


def combine_model_spatial_bn(model, devices, rendezvous):
    raise UnsupportedError("combine_spatial_bn is not available yet")
