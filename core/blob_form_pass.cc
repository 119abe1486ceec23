#include "core/blob_form_pass.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace hetnet {
namespace {

class FormConverter {
 public:
  FormConverter(BlobFormInput in, const BlobFormPolicy& policy) : in_(std::move(in)), policy_(policy) {}

  BlobFormResult Run() {
    const auto& ops = *in_.ops;
    std::set<std::string> written;
    for (const auto& op : ops) {
      for (const auto& b : op.input())
        if (!written.count(b)) read_first_.insert(b);  // a value from before the run
      written.insert(op.output().begin(), op.output().end());
    }
    for (size_t i = 0; i < ops.size(); ++i) Visit(ops[i], in_.op_notes->at(i));
    for (const auto& [name, form] : form_of_)  // values someone reads after the run
      if (!own_valid_[name] && (in_.keep.count(name) || read_first_.count(name))) Restore(name);
    return std::move(r_);
  }

 private:
  void Visit(const caffe2::OperatorDef& op, const std::string& note) {
    FormRole role = policy_.RoleOf(op);
    if (role.convert && role.follower)
      for (int k : role.inputs)
        if (k < op.input_size() && !form_of_.count(op.input(k))) role.convert = false;
    if (!role.convert) {
      for (const auto& b : op.input()) Restore(b);
      for (const auto& b : op.output()) form_of_.erase(b), own_valid_[b] = true;
      Emit(op, note);
      return;
    }
    caffe2::OperatorDef c = op;
    for (int k = 0; k < op.input_size(); ++k)  // inputs read as they are must hold their own value
      if (std::find(role.inputs.begin(), role.inputs.end(), k) == role.inputs.end()) Restore(op.input(k));
    for (int k : role.inputs)
      if (k < op.input_size()) c.set_input(k, Form(op.input(k), op, k));
    std::set<int> form_outputs(role.outputs.begin(), role.outputs.end());
    for (int k = 0; k < op.output_size(); ++k) {
      const std::string& y = op.output(k);
      if (!form_outputs.count(k)) {
        Restore(y);  // written in place under its own name: no form holds the value after this op
        form_of_.erase(y), own_valid_[y] = true;
        continue;
      }
      auto it = form_of_.find(y);
      const std::string f = it != form_of_.end() ? it->second : Fresh(y + policy_.Suffix());
      form_of_[y] = f;
      writer_of_[y] = &op;
      own_valid_[y] = false;
      c.set_output(k, f);
    }
    const std::string adapted = policy_.Adapt(&c);
    ++(role.follower ? r_.followers : r_.anchors);
    Emit(c, note + (note.empty() || adapted.empty() ? "" : ", ") + adapted);
  }

  // The form blob of b's current value, made by a ToForm op when there is none yet.
  std::string Form(const std::string& b, const caffe2::OperatorDef& reader, int slot) {
    auto it = form_of_.find(b);
    if (it != form_of_.end()) return it->second;
    if (policy_.InForm(b)) {
      form_of_[b] = b;
      own_valid_[b] = true;  // (only form readers read it: the policy's promise)
      return b;
    }
    const std::string f = Fresh(b + policy_.Suffix());
    Emit(policy_.ToForm(b, f, reader, slot), "");
    ++r_.switches;
    form_of_[b] = f;
    writer_of_[b] = &reader;
    own_valid_[b] = true;
    return f;
  }

  // b's own blob holds its current value again (a FromForm op when only the form holds it).
  void Restore(const std::string& b) {
    auto it = own_valid_.find(b);
    if (it == own_valid_.end() || it->second) return;
    Emit(policy_.FromForm(form_of_.at(b), b, *writer_of_.at(b)), "");
    ++r_.switches;
    it->second = true;
  }

  std::string Fresh(const std::string& base) {
    for (int k = 0;; ++k) {
      std::string n = k ? base + "_" + std::to_string(k) : base;
      if (in_.taken.insert(n).second) return n;
    }
  }

  void Emit(caffe2::OperatorDef op, const std::string& note) {
    r_.ops.push_back(std::move(op));
    r_.op_notes.push_back(note);
  }

  BlobFormInput in_;
  const BlobFormPolicy& policy_;
  std::map<std::string, std::string> form_of_;  // blob -> the blob holding its current value in the form
  std::map<std::string, bool> own_valid_;       // whether the blob itself holds its current value
  // The op (of in_.ops, which outlive the walk) that wrote, or first needed, the form.
  std::map<std::string, const caffe2::OperatorDef*> writer_of_;
  std::set<std::string> read_first_;
  BlobFormResult r_;
};

}  // namespace

int TakeLayoutIfWorthIt(BlobFormResult* r, std::vector<caffe2::OperatorDef>* ops, std::vector<std::string>* op_notes) {
  int convs = 0;
  for (const auto& op : r->ops)
    for (const auto& a : op.arg()) convs += op.type() == "Conv" && a.name() == "activation_order";
  if (convs == 0 || r->switches >= 2 * convs) return 0;
  *ops = std::move(r->ops);
  *op_notes = std::move(r->op_notes);
  return convs;
}

void SetStringArgument(caffe2::OperatorDef* op, const std::string& name, const std::string& value) {
  for (auto& a : *op->mutable_arg())
    if (a.name() == name) return a.set_s(value);
  auto* a = op->add_arg();
  a->set_name(name);
  a->set_s(value);
}

BlobFormResult ConvertBlobForms(BlobFormInput in, const BlobFormPolicy& policy) {
  for (const auto& op : *in.ops) {
    in.taken.insert(op.input().begin(), op.input().end());
    in.taken.insert(op.output().begin(), op.output().end());
  }
  in.taken.insert(in.net->external_input().begin(), in.net->external_input().end());
  in.taken.insert(in.net->external_output().begin(), in.net->external_output().end());
  return FormConverter(std::move(in), policy).Run();
}

}  // namespace hetnet
