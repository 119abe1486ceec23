// hetnet::Predictor, bound when core/predictor.h is part of the tree.
#include "bindings.h"

#if __has_include("core/predictor.h")
#define HETNET_PYTHON_HAS_PREDICTOR 1
#include "core/predictor.h"
#endif

namespace hetnet_python {

void InitPredictor(py::module_& m) {
#ifdef HETNET_PYTHON_HAS_PREDICTOR
  m.attr("has_predictor") = true;
#else
  m.attr("has_predictor") = false;
#endif
}

}  // namespace hetnet_python
