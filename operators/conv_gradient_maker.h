// Gradient maker shared by Conv and ConvTranspose: <Type>Gradient(X, filter, dY) -> dfilter,
// dbias (absent when the forward op had no bias), dX (unless no_gradient_to_input).
#pragma once

#include <algorithm>

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

class GetConvLikeGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const bool dx = !ArgumentHelper(Def()).GetSingleArgument<int>("no_gradient_to_input", 0);
    std::vector<std::string> outs{GI(1)};
    std::vector<caffe2::Argument> args(Def().arg().begin(), Def().arg().end());
    if (Def().input_size() == 3) {
      outs.push_back(GI(2));
    } else {  // no bias input: the gradient op must not produce dbias
      args.erase(std::remove_if(args.begin(), args.end(), [](const caffe2::Argument& a) { return a.name() == "no_bias"; }),
                 args.end());
      caffe2::Argument nb;
      nb.set_name("no_bias");
      nb.set_i(1);
      args.push_back(nb);
    }
    if (dx) outs.push_back(GI(0));
    return {GradientOp(Def().type() + "Gradient", {I(0), I(1), GO(0)}, outs, args)};
  }
};

}  // namespace hetnet
