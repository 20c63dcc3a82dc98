from tinymodel.layers import TinyNet

__all__ = ["TinyNet"]
