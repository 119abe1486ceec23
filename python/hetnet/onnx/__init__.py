"""ONNX for hetnet: ``hetnet.onnx.backend`` runs ONNX models (ONNX's ``onnx.backend.base.Backend``
API, through the C++ importer in onnx/); ``hetnet.onnx.frontend`` exports NetDefs to ONNX.

Nothing is imported here, so that ``import hetnet.onnx`` does not need PyPI ``onnx``; the
submodules import it themselves.
"""
