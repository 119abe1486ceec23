"""Records of blobs, a subset of caffe2.python.schema: Scalar and Struct fields, NewRecord,
from_blob_list, FeedRecord and FetchRecord.

A Scalar is one blob of a dtype (``Scalar(np.float32)``); a Struct is an ordered set of named
fields (``Struct(('x', Scalar(np.float32)), ('y', Struct(...)))``), whose nested names join with
':' in field_names(). ``record.x`` is the field; calling a Scalar (``record.x()``) gives its blob.
Caffe2's List, Map, metadata and the dataset readers built on them are not provided.
"""
import collections

import numpy as np

FIELD_SEPARATOR = ":"


class Field(object):
    def field_names(self):
        raise NotImplementedError

    def field_blobs(self):
        raise NotImplementedError

    def field_types(self):
        raise NotImplementedError

    def has_blobs(self):
        raise NotImplementedError

    def clone(self, keep_blobs=True):
        raise NotImplementedError


class Scalar(Field):
    def __init__(self, dtype=None, blob=None, metadata=None):
        self.dtype = np.dtype(dtype) if dtype is not None else np.dtype(np.void)
        self._blob = blob
        self.metadata = metadata

    def field_names(self):
        return [""]

    def field_types(self):
        return [self.dtype]

    def field_blobs(self):
        assert self._blob is not None, "Value is not set for this field."
        return [self._blob]

    def has_blobs(self):
        return self._blob is not None

    def get(self):
        return self._blob

    def __call__(self):
        return self.get()

    def set_value(self, blob, throw_on_type_mismatch=False, unsafe=False):
        self._blob = blob

    def clone(self, keep_blobs=True):
        return Scalar(self.dtype, self._blob if keep_blobs else None, self.metadata)

    def __repr__(self):
        return "Scalar({!r}, blob={})".format(self.dtype, self._blob)


class Struct(Field):
    def __init__(self, *fields):
        self.fields = collections.OrderedDict()
        for name, field in fields:
            assert isinstance(name, str) and name, "Struct field names must be non-empty strings"
            assert FIELD_SEPARATOR not in name, "Field names may not contain ':' ({})".format(name)
            assert name not in self.fields, "Duplicate field name: {}".format(name)
            if not isinstance(field, Field):
                field = Scalar(field)
            self.fields[name] = field

    def __getattr__(self, item):
        fields = self.__dict__.get("fields")
        if fields is not None and item in fields:
            return fields[item]
        raise AttributeError(item)

    def __getitem__(self, item):
        field = self
        for part in item.split(FIELD_SEPARATOR):
            field = field.fields[part]
        return field

    def field_names(self):
        names = []
        for name, field in self.fields.items():
            names.extend(name if sub == "" else name + FIELD_SEPARATOR + sub for sub in field.field_names())
        return names

    def field_types(self):
        return [t for field in self.fields.values() for t in field.field_types()]

    def field_blobs(self):
        return [b for field in self.fields.values() for b in field.field_blobs()]

    def has_blobs(self):
        return all(field.has_blobs() for field in self.fields.values())

    def all_scalars(self):
        out = []
        for field in self.fields.values():
            out.extend([field] if isinstance(field, Scalar) else field.all_scalars())
        return out

    def clone(self, keep_blobs=True):
        return Struct(*[(name, field.clone(keep_blobs)) for name, field in self.fields.items()])

    def __repr__(self):
        return "Struct({})".format(", ".join("{}={!r}".format(k, v) for k, v in self.fields.items()))


def from_blob_list(schema, values):
    """A copy of schema whose scalars hold `values` (in field_names() order)."""
    record = schema.clone(keep_blobs=False)
    scalars = [record] if isinstance(record, Scalar) else record.all_scalars()
    assert len(scalars) == len(values), "{} blobs for {} fields".format(len(values), len(scalars))
    for scalar, value in zip(scalars, values):
        scalar.set_value(value)
    return record


def NewRecord(net, schema):
    """schema with a new blob of `net` for each field (named after the field, in the current name
    scope, made unique by Net.NextScopedBlob)."""
    if isinstance(schema, Scalar):
        return from_blob_list(schema, [net.NextScopedBlob("unnamed_scalar")])
    assert isinstance(schema, Field), "Record must be a schema.Field instance."
    return from_blob_list(schema, [net.NextScopedBlob(prefix=name) for name in schema.field_names()])


def FeedRecord(record, arrays, ws=None):
    """Feeds one array per field of record (in field_names() order)."""
    from hetnet import workspace
    feed = ws.FeedBlob if ws is not None else workspace.FeedBlob
    blobs = record.field_blobs()
    assert len(blobs) == len(arrays), "{} arrays for {} fields".format(len(arrays), len(blobs))
    for blob, array in zip(blobs, arrays):
        feed(blob, array)


def FetchRecord(record, ws=None):
    """A copy of record whose scalars hold the fetched arrays instead of blob names."""
    from hetnet import workspace
    fetch = ws.FetchBlob if ws is not None else workspace.FetchBlob
    return from_blob_list(record, [fetch(b) for b in record.field_blobs()])
