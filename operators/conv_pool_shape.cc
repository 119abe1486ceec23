#include "operators/conv_pool_shape.h"

#include "core/checked_size.h"

namespace hetnet {

void CheckConvPoolGeomSizes(const std::string& op, ConvPoolKind kind, const ConvPoolGeom& g) {
  HN_ENFORCE(g.OH >= 0 && g.OW >= 0, op, ": output size ", g.OH, "x", g.OW, " is negative");
  const std::string out_what = op + ": output";
  CheckedNumel(g.y_shape(), out_what.c_str());
  if (kind == ConvPoolKind::Pool) return;
  // The im2col buffer of one image and group: [C/group * kH * kW, OH * OW] (ConvTranspose: the
  // same with input and output swapped).
  const int64_t cg = g.group > 0 ? (kind == ConvPoolKind::Conv ? g.C : g.M) / g.group : 0;
  const std::string col_what = op + ": im2col buffer";
  if (kind == ConvPoolKind::Conv) {
    CheckedNumel({cg, g.kh, g.kw, g.OH, g.OW}, col_what.c_str());
  } else {
    CheckedNumel({cg, g.kh, g.kw, g.H, g.W}, col_what.c_str());
  }
}

}  // namespace hetnet
