"""Helpers that add If / While operators (caffe2.python.control_ops_util): the sub-nets' outer
blobs (read before written, or named in the lexical scope) become the operator's inputs and
outputs. hetnet runs sub-nets in the operator's own workspace (operators/control_ops.cc), where
Caffe2 1.x wrapped them in Do operators with child workspaces: blobs local to a branch stay
visible outside it here."""
from hetnet import core


def get_external_blob_names(net, lexical_scope):
    """(blobs the net reads before writing them, blobs it writes that are in lexical_scope). A blob
    read before written must be in lexical_scope."""
    proto = net.Proto()
    ssa, _ = core.get_ssa(proto, {})
    inputs = core.get_undefined_blobs(ssa)
    scope = {str(b) for b in lexical_scope}
    for name in inputs:
        assert str(name) in scope, "Input blob " + name + " is undefined"
    outputs = {o for op in proto.op for o in op.output if o in scope}
    return inputs, outputs


def _refs(names):
    return [core.BlobReference(name) for name in sorted(names)]


def add_if_op(if_net, cond_blob, lexical_scope, then_net, else_net=None):
    """Adds If(cond_blob, outer inputs) -> outer outputs running then_net / else_net."""
    inputs, outputs = get_external_blob_names(then_net, lexical_scope)
    kwargs = {"then_net": then_net.Proto()}
    if else_net is not None:
        else_inputs, else_outputs = get_external_blob_names(else_net, lexical_scope)
        inputs, outputs = inputs | else_inputs, outputs | else_outputs
        kwargs["else_net"] = else_net.Proto()
    return if_net._CreateAndAddToSelf("If", [cond_blob] + _refs(inputs), _refs(outputs), **kwargs)


def add_while_op(while_net, cond_blob, lexical_scope, loop_body_net, condition_body_net=None):
    """Adds While(cond_blob, outer inputs) -> outer outputs running loop_body_net while cond_blob is
    true; condition_body_net (optional) recomputes cond_blob before each test and must write it
    exactly once."""
    inputs, outputs = get_external_blob_names(loop_body_net, lexical_scope)
    inputs = inputs | outputs  # the loop may run zero times: its outputs keep their values
    kwargs = {"loop_net": loop_body_net.Proto()}
    if condition_body_net is not None:
        writes = sum(str(cond_blob) in op.output for op in condition_body_net.Proto().op)
        assert writes == 1, "The condition net must write the condition blob once (it writes it {} times)".format(writes)
        cond_inputs, cond_outputs = get_external_blob_names(condition_body_net, lexical_scope)
        inputs, outputs = inputs | cond_inputs, outputs | cond_outputs
        kwargs["cond_net"] = condition_body_net.Proto()
    inputs.discard(str(cond_blob))
    return while_net._CreateAndAddToSelf("While", [cond_blob] + _refs(inputs), _refs(outputs), **kwargs)
