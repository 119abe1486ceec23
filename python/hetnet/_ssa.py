"""SSA helpers of caffe2.python.core (get_undefined_blobs, get_output_producers,
get_op_ids_in_path) and Net.ClonePartial built on them. A versioned blob is (name, version) as
core.get_ssa numbers them."""
import collections


def get_undefined_blobs(ssa):
    """Blobs read before any op of `ssa` writes them (version 0 inputs)."""
    undefined = set()
    for inputs, _outputs in ssa:
        undefined.update(name for name, version in inputs if version == 0)
    return undefined


def get_output_producers(ssa):
    """{(blob, version): index of the op that writes that version}."""
    producers = {}
    for i, (_inputs, outputs) in enumerate(ssa):
        for versioned in outputs:
            producers[versioned] = i
    return producers


def get_op_ids_in_path(ssa, blob_versions, inputs, outputs):
    """Sorted indices of the ops needed to compute `outputs` (at their latest versions) from
    `inputs` (taken at their latest versions)."""
    given = set((str(i), blob_versions[str(i)]) for i in inputs)
    producers = get_output_producers(ssa)
    pending = [(str(o), blob_versions[str(o)]) for o in outputs]
    used = set()
    while pending:
        versioned = pending.pop()
        if versioned in given or versioned not in producers:
            continue
        op_id = producers[versioned]
        if op_id not in used:
            used.add(op_id)
            pending.extend(ssa[op_id][0])
    return sorted(used)


def ClonePartial(net, name, inputs, outputs, remap_funcs=None):
    """Net.ClonePartial: a net `name` with only the ops needed for `outputs` given `inputs`.

    inputs: {blob: new name} (or a list of blobs kept as they are, or a list of pairs). Blobs made
    inside get the prefix '<name>/'; blobs read but made by none of the kept ops keep their names
    and become external inputs. An op needed for the outputs that would also be needed to make an
    input is an AssertionError. Returns (new net, [BlobReference of each output in it])."""
    from hetnet import core
    if isinstance(inputs, dict):
        pairs = list(inputs.items())
    elif isinstance(inputs, list) and inputs and all(isinstance(i, tuple) and len(i) == 2 for i in inputs):
        pairs = list(inputs)
    else:
        pairs = [(i, i) for i in inputs]
    inputs = collections.OrderedDict((str(k), str(v)) for k, v in pairs)
    for output in outputs:
        assert net.BlobIsDefined(output), "{} is not defined".format(output)
    output_names = [str(o) for o in outputs]
    ssa, blob_versions = core.get_ssa(net.Proto(), {i: 0 for i in inputs})
    used = get_op_ids_in_path(ssa, blob_versions, inputs, output_names)
    disallowed = get_op_ids_in_path(ssa, blob_versions, [], inputs)
    assert not set(used) & set(disallowed), \
        "Cannot partially clone net: some of the ops required would generate the given input."
    undefined = get_undefined_blobs([op for i, op in enumerate(ssa) if i in used]) - set(inputs)
    prefix = name + "/" if name else ""

    def remap(blob):
        if blob in inputs:
            return inputs[blob]
        return blob if blob in undefined else prefix + blob

    mapping = {b: remap(b) for b in blob_versions}
    new_net = net.Clone(name, mapping, used, remap_funcs)
    new_inputs = [mapping[i] for i in inputs] + sorted(undefined)
    new_outputs = [mapping[o] for o in output_names]
    proto = new_net.Proto()
    del proto.external_input[:]
    proto.external_input.extend(new_inputs)
    del proto.external_output[:]
    proto.external_output.extend(new_outputs)
    new_net._net_blob_names = set(new_inputs) | {b for op in proto.op for b in op.output}
    return new_net, [new_net.GetBlobRef(o) for o in new_outputs]
