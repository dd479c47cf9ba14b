"""gpuprobe.Client: gpuprobed's gRPC API (gpuprobe.v1.ProbeService) for Python.

Rows, results, checks and job records come back as plain dicts with the API's field names (as
the CLI's csv columns): enum values as the CLI spells them ("per-slot", "too-few-reps"), 64-bit
integers as ints, timestamps as aware datetimes, absent values as None. A moe-union row's arm
(variant, t, slots, union_size) is merged into the row; another probe's result has its axes,
each metric's median (NAME) and NAME_min, _max, _spread, _low, _high, _kept, and its derived
values as keys of their own.
"""
import copy
import datetime
import hashlib
import json
import os

import grpc
from google.protobuf import descriptor

from gpuprobe.v1 import probe_pb2, probe_pb2_grpc

_TERMINAL = {probe_pb2.JOB_STATE_SUCCEEDED, probe_pb2.JOB_STATE_FAILED,
             probe_pb2.JOB_STATE_CANCELLED}

# Whatever the daemon has stored reads back, however large a row an old store holds.
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1)]

_SWEEP_FIELDS = {"experts", "hidden", "ff", "selected", "t", "t_values", "unions", "reps",
                 "timing", "cache", "variants", "seed", "labels", "order", "require_clean",
                 "precision", "max_seconds", "blocks"}
_CHECK_FIELDS = {"experts", "hidden", "ff", "selected", "t", "unions", "variants", "seed",
                 "labels", "dump"}


class GpuprobeError(Exception):
    """A call gpuprobed refused or a job that did not succeed: `code` is the gRPC status code
    (grpc.StatusCode) or, for a job, its end state ("failed", "cancelled")."""

    def __init__(self, code, message, job_id=None):
        super().__init__(message if job_id is None else "job %s %s: %s" % (job_id, code, message))
        self.code = code
        self.message = message
        self.job_id = job_id


def _enum_name(enum_type, number):
    """The CLI's spelling of an enum value: its name without the enum's prefix, lower case,
    words joined by '-'; None for UNSPECIFIED (0)."""
    if number == 0:
        return None
    value = enum_type.values_by_number.get(number)
    if value is None:
        return "unknown (%d)" % number
    prefix = enum_type.values_by_number[0].name[: -len("UNSPECIFIED")]
    return value.name[len(prefix):].lower().replace("_", "-")


def _enum_number(enum_type, name, field):
    """The enum value the CLI spelling `name` names; ValueError naming the field otherwise."""
    prefix = enum_type.values_by_number[0].name[: -len("UNSPECIFIED")]
    value = enum_type.values_by_name.get(prefix + str(name).upper().replace("-", "_"))
    if value is None or value.number == 0:
        allowed = [_enum_name(enum_type, v.number) for v in enum_type.values if v.number != 0]
        raise ValueError("%s: %r is not one of %s" % (field, name, ", ".join(allowed)))
    return value.number


def _repeated(field):
    """Whether `field` is repeated: `is_repeated` in recent protobuf (7 has no `label`), `label`
    in older ones (Debian's 3.21)."""
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == descriptor.FieldDescriptor.LABEL_REPEATED


def _plain(message):
    """A message as a dict of plain Python values (see the module's doc)."""
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _repeated(field):
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                out[field.name] = dict(value)
            elif field.message_type is not None:
                out[field.name] = [_plain_value(field, v) for v in value]
            elif field.enum_type is not None:
                out[field.name] = [_enum_name(field.enum_type, v) for v in value]
            else:
                out[field.name] = list(value)
            continue
        # Messages, oneof members and proto3 `optional` scalars (a synthetic oneof) say whether
        # they are set; other scalars always have a value.
        has_presence = field.message_type is not None or field.containing_oneof is not None
        if has_presence and not message.HasField(field.name):
            out[field.name] = None
            continue
        out[field.name] = _plain_value(field, value)
    return out


def _plain_value(field, value):
    if field.enum_type is not None:
        return _enum_name(field.enum_type, value)
    if field.message_type is None:
        return value
    name = field.message_type.full_name
    if name == "google.protobuf.Timestamp":
        return value.ToDatetime().replace(tzinfo=datetime.timezone.utc)
    if name == "google.protobuf.Any":
        return {"type_url": value.type_url}
    return _plain(value)


def _row(row):
    """A moe-union row, its arm merged in."""
    out = _plain(row)
    out.update(out.pop("arm") or {})
    return out


def _result(result):
    """Another probe's result: axes, metrics and derived values as keys of their own."""
    out = {"job_id": result.job_id, "arm_index": result.arm_index, "attempt": result.attempt,
           "device": result.device, "disturbance": result.disturbance,
           "verdict": _enum_name(result.DESCRIPTOR.fields_by_name["verdict"].enum_type,
                                 result.verdict),
           "impossible": result.impossible or None}
    for axis in result.axes:
        out[axis.name] = axis.int_value if axis.HasField("int_value") else axis.text_value
    for m in result.metrics:
        out[m.name] = m.median
        for part in ("min", "max", "spread", "low", "high", "kept"):
            out["%s_%s" % (m.name, part)] = getattr(m, part)
    for d in result.derived:
        out[d.name] = d.value
    return out


def _check(check):
    out = _plain(check)
    for axis in out.pop("axes"):
        out[axis["name"]] = axis["int_value"] if axis["int_value"] is not None else axis["text_value"]
    return out


def _set(message, field, value, name=None):
    """message.field = value (a list extends a repeated field); ValueError naming the parameter
    (`name`, default `field`) where the value does not fit the field's type or range."""
    try:
        if isinstance(value, (list, tuple)):
            getattr(message, field).extend(value)
        else:
            setattr(message, field, value)
    except (ValueError, TypeError) as e:
        raise ValueError("%s: %r does not fit (%s)" % (name or field, value, e)) from None


def _geometry(params, target):
    for name in ("experts", "hidden", "ff", "selected"):
        if params.get(name) is not None:
            _set(target.geometry, name, params[name])


def _variants(value):
    if value in (None, "all"):
        return []
    names = [value] if isinstance(value, str) else value
    return [_enum_number(probe_pb2.KernelVariant.DESCRIPTOR, v, "variants") for v in names]


def _unknown(params, known, what):
    unknown = sorted(set(params) - known)
    if unknown:
        raise TypeError("%s: unknown parameter %s (known: %s)" % (what, ", ".join(unknown),
                                                                  ", ".join(sorted(known))))


def sweep_request(**params):
    """A gpuprobe.v1.SweepRequest from the sweep's parameters, named as the CLI's flags
    (`t` is --t: t = 1..T); a parameter left out takes the daemon's default."""
    _unknown(params, _SWEEP_FIELDS, "sweep")
    r = probe_pb2.SweepRequest()
    _geometry(params, r)
    if params.get("t") is not None:
        _set(r, "t_max", params["t"], "t")
    _set(r, "t_values", list(params.get("t_values") or []))
    _set(r, "unions", list(params.get("unions") or []))
    for name in ("reps", "seed", "precision", "max_seconds", "blocks"):
        if params.get(name) is not None:
            _set(r, name, params[name])
    if params.get("timing") is not None:
        r.timing = _enum_number(probe_pb2.TimingMode.DESCRIPTOR, params["timing"], "timing")
    if params.get("cache") is not None:
        r.cache = _enum_number(probe_pb2.CacheMode.DESCRIPTOR, params["cache"], "cache")
    if params.get("order") is not None:
        r.order = _enum_number(probe_pb2.ArmOrder.DESCRIPTOR, params["order"], "order")
    r.variants.extend(_variants(params.get("variants")))
    r.require_clean = bool(params.get("require_clean", False))
    r.labels.update(params.get("labels") or {})
    return r


class Rows:
    """A job's rows (dicts) as they arrive; `job_id` is known once the daemon named the job.
    Iterating to the end raises GpuprobeError if the job did not succeed. `frame()` collects the
    rest into a pandas DataFrame (pandas must be installed)."""

    def __init__(self, events, job_id=None):
        self._events = events
        self.job_id = job_id
        self.state = None  # "succeeded", "failed", "cancelled" once the job ended
        self.started = None  # the job's JobStarted event (device, resolved sweep) as a dict

    def __iter__(self):
        try:
            for event in self._events:
                kind = event.WhichOneof("event")
                if kind == "accepted":
                    self.job_id = event.accepted.job_id
                elif kind == "started":
                    self.started = _plain(event.started)
                elif kind == "row":
                    yield _row(event.row)
                elif kind == "result":
                    yield _result(event.result)
                elif kind == "check":
                    yield _check(event.check)
                elif kind == "finished":
                    self.state = _enum_name(probe_pb2.JobState.DESCRIPTOR, event.finished.state)
                    if event.finished.state != probe_pb2.JOB_STATE_SUCCEEDED:
                        raise GpuprobeError(self.state, event.finished.error_message, self.job_id)
        except grpc.RpcError as e:
            raise GpuprobeError(e.code(), e.details(), self.job_id) from None

    def frame(self):
        import pandas  # noqa: PLC0415 (optional)
        return pandas.DataFrame(list(self))


class Client:
    """gpuprobed at `server` (HOST:PORT; default $GPUPROBE_SERVER, else 127.0.0.1:7070).

    `token`: a bearer token for a daemon with --tokens (default $GPUPROBE_TOKEN); `tls_ca`: a
    PEM file to trust, to connect with TLS (default $GPUPROBE_TLS_CA; else plaintext).
    """

    def __init__(self, server=None, token=None, tls_ca=None):
        self.server = server or os.environ.get("GPUPROBE_SERVER") or "127.0.0.1:7070"
        token = token or os.environ.get("GPUPROBE_TOKEN")
        self._metadata = [("authorization", "Bearer " + token)] if token else []
        tls_ca = tls_ca or os.environ.get("GPUPROBE_TLS_CA")
        if tls_ca:
            with open(tls_ca, "rb") as pem:
                credentials = grpc.ssl_channel_credentials(root_certificates=pem.read())
            self._channel = grpc.secure_channel(self.server, credentials, options=_CHANNEL_OPTIONS)
        else:
            self._channel = grpc.insecure_channel(self.server, options=_CHANNEL_OPTIONS)
        self._stub = probe_pb2_grpc.ProbeServiceStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout=30):
        try:
            return getattr(self._stub, method)(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise GpuprobeError(e.code(), e.details()) from None

    def _watch(self, job_id, timeout=None):
        request = probe_pb2.WatchRequest(job_id=job_id)
        return self._stub.Watch(request, metadata=self._metadata, timeout=timeout)

    # Running work and following it.

    def _keyed(self, idempotency_key):
        """The call's metadata, with Submit's idempotency key for a streaming submit."""
        if not idempotency_key:
            return self._metadata
        return list(self._metadata or []) + [("idempotency-key", idempotency_key)]

    def sweep(self, idempotency_key="", **params):
        """Runs a moe-union sweep (parameters as the CLI's flags: experts, hidden, ff, selected,
        t, t_values, unions, reps, timing, cache, variants, seed, labels, order, require_clean,
        precision, max_seconds, blocks) and yields its rows as they arrive (Rows). A retry with
        the same `idempotency_key` yields the first call's job."""
        request = sweep_request(**params)
        return Rows(self._stub.Run(request, metadata=self._keyed(idempotency_key)))

    def check(self, idempotency_key="", **params):
        """Runs a moe-union exactness check (experts, hidden, ff, selected, t, unions, variants,
        seed, labels, dump) and yields its kernel checks (Rows of dicts with `passed`); the
        idempotency key as sweep's."""
        _unknown(params, _CHECK_FIELDS, "check")
        r = probe_pb2.CheckRequest()
        _geometry(params, r)
        if params.get("t") is not None:
            _set(r, "t", params["t"])
        if params.get("seed") is not None:
            _set(r, "seed", params["seed"])
        _set(r, "unions", list(params.get("unions") or []))
        r.variants.extend(_variants(params.get("variants")))
        r.labels.update(params.get("labels") or {})
        r.dump = bool(params.get("dump", False))
        return Rows(self._stub.Check(r, metadata=self._keyed(idempotency_key)))

    def run(self, probe, params=None, check=False, labels=None, idempotency_key=""):
        """Submits a job of any probe (`gpuprobe probes` lists them; params: NAME -> value, as
        `--param NAME=VALUE`) and yields its results as they arrive (Rows)."""
        job_id = self.submit(probe=probe, params=params, check=check, labels=labels,
                             idempotency_key=idempotency_key)
        return Rows(self._watch(job_id), job_id)

    def submit(self, probe=None, params=None, check=False, labels=None, priority=0,
               idempotency_key="", device=None, host="", gpu="", **sweep):
        """Queues a job and returns its id: a moe-union sweep from `sweep`'s parameters, or with
        `probe` a job of that probe from `params`."""
        request = probe_pb2.SubmitRequest(priority=priority, idempotency_key=idempotency_key,
                                          host=host, gpu=gpu)
        if device is not None:
            request.device = device
        if probe is not None:
            if sweep:
                raise TypeError("submit: %s belong to a sweep, not to probe %r (use params)" %
                                (", ".join(sorted(sweep)), probe))
            request.probe.probe = probe
            request.probe.check = check
            request.probe.param_values.update({k: _param_text(v) for k, v in (params or {}).items()})
            request.probe.labels.update(labels or {})
        else:
            if labels:
                sweep["labels"] = labels
            request.sweep.CopyFrom(sweep_request(**sweep))
        return self._call("Submit", request).id

    def wait(self, job_id, timeout=None):
        """Blocks until the job ends (at most `timeout` seconds: TimeoutError) and returns its
        record; GpuprobeError if it did not succeed."""
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError("timeout: %r is not a positive number of seconds (None: no limit)"
                             % (timeout,))
        try:
            for event in self._watch(job_id, timeout):
                if event.WhichOneof("event") == "finished":
                    break
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise GpuprobeError(e.code(), e.details(), job_id) from None
        job = self._call("GetJob", probe_pb2.GetJobRequest(job_id=job_id))
        if job.state not in _TERMINAL:
            raise TimeoutError("job %s did not end within %s s" % (job_id, timeout))
        record = _plain(job)
        if job.state != probe_pb2.JOB_STATE_SUCCEEDED:
            raise GpuprobeError(record["state"], job.error_message, job_id)
        return record

    def cancel(self, job_id):
        """Cancels a queued or running job; returns its record."""
        return _plain(self._call("CancelJob", probe_pb2.CancelJobRequest(job_id=job_id)))

    # Reading.

    def job(self, job_id):
        """The job's record."""
        return _plain(self._call("GetJob", probe_pb2.GetJobRequest(job_id=job_id)))

    def rows(self, job_id, frame=False):
        """The rows (results, checks) of the job's last attempt: a list of dicts, or with
        `frame` a pandas DataFrame."""
        try:
            events = list(self._watch(job_id, timeout=60))
        except grpc.RpcError as e:
            raise GpuprobeError(e.code(), e.details(), job_id) from None
        last = max((e.attempt for e in events), default=0)
        rows = []
        for event in events:
            if event.attempt != last:
                continue
            kind = event.WhichOneof("event")
            if kind == "row":
                rows.append(_row(event.row))
            elif kind == "result":
                rows.append(_result(event.result))
            elif kind == "check":
                rows.append(_check(event.check))
        if frame:
            import pandas  # noqa: PLC0415 (optional)
            return pandas.DataFrame(rows)
        return rows

    def show(self, job_id):
        """{"job": the record, "rows": its last attempt's rows}, as `gpuprobe show`."""
        return {"job": self.job(job_id), "rows": self.rows(job_id)}

    def jobs(self, state=None, labels=None, limit=20):
        """The newest jobs' records (state: a name or a list of names: queued, running,
        succeeded, failed, cancelled)."""
        request = probe_pb2.ListJobsRequest(page_size=limit)
        for name in [state] if isinstance(state, str) else (state or []):
            request.states.append(_enum_number(probe_pb2.JobState.DESCRIPTOR, name, "state"))
        request.labels.update(labels or {})
        return [_plain(j) for j in self._call("ListJobs", request).jobs]

    def compare(self, base, candidate, threshold=None, history=None):
        """CAND against BASE arm by arm (each a job id or label:KEY=VALUE), as `gpuprobe
        compare`: {"arms": [...], "note": ..., ...}."""
        request = probe_pb2.CompareJobsRequest(base=base, candidate=candidate)
        if threshold is not None:
            request.threshold = threshold
        if history is not None:
            request.history = history
        return _plain(self._call("CompareJobs", request, timeout=120))

    def info(self):
        """The daemon, its devices and its fleet."""
        return _plain(self._call("GetServerInfo", probe_pb2.GetServerInfoRequest()))

    def probes(self):
        """The probes the daemon serves, with their parameters, axes and metrics."""
        return _plain(self._call("ListProbes", probe_pb2.ListProbesRequest()))["probes"]

    # Modules: compiled CUDA code for the kernel probe.

    def upload(self, module):
        """Stores a compiled CUDA module (bytes: a cubin, a fatbin or PTX; e.g. the output of
        `nvcc -cubin`, or a Triton kernel's compiled.asm["cubin"]) in the daemon, sending it only
        where the daemon does not have its bytes yet. Returns its record: `id` (the sha256 of
        the bytes, by which jobs name it), `format`, `kernels` (each with `text_sha256`, the
        hash of its machine code) and `already_stored`."""
        if isinstance(module, str):
            module = module.encode()
        try:
            found = self._call("GetModule", probe_pb2.GetModuleRequest(
                id=hashlib.sha256(module).hexdigest()))
            found.already_stored = True
            return _plain(found)
        except GpuprobeError as e:
            if e.code != grpc.StatusCode.NOT_FOUND:
                raise
        chunk = 1 << 20
        chunks = (probe_pb2.ModuleChunk(data=module[at:at + chunk])
                  for at in range(0, len(module), chunk))
        try:
            return _plain(self._stub.UploadModule(chunks, metadata=self._metadata, timeout=300))
        except grpc.RpcError as e:
            raise GpuprobeError(e.code(), e.details()) from None

    def kernel(self, spec, modules=None, check=False, labels=None, idempotency_key=""):
        """Times your own compiled CUDA kernels under the daemon's harness (the kernel probe) and
        yields its results as they arrive (Rows; a check's: its output comparisons). `spec` is
        the probe's KernelParams as a dict in protobuf's JSON mapping (buffers; arms of launches,
        each with its kernel, grid, block, shared memory and arguments). A launch's "module"
        names one of `modules` (name -> bytes: a cubin, fatbin or PTX, e.g. `nvcc -cubin` output
        or a Triton kernel's compiled.asm["cubin"]), each uploaded where the daemon does not
        have it; a launch without one takes the only module given."""
        spec = copy.deepcopy(spec)
        ids = {name: self.upload(data)["id"] for name, data in (modules or {}).items()}
        for arm in spec.get("arms", []):
            for launch in arm.get("launches", []):
                name = launch.get("module")
                if name is None and len(ids) == 1:
                    launch["module"] = next(iter(ids.values()))
                elif name in ids:
                    launch["module"] = ids[name]
                elif not (isinstance(name, str) and len(name) == 64):
                    raise ValueError("kernel: launch of %r names module %r, which modules does "
                                     "not give" % (launch.get("kernel"), name))
        request = probe_pb2.SubmitRequest(idempotency_key=idempotency_key)
        request.probe.probe = "kernel"
        request.probe.params_json = json.dumps(spec)
        request.probe.check = check
        request.probe.labels.update(labels or {})
        job_id = self._call("Submit", request).id
        return Rows(self._watch(job_id), job_id)

    def module(self, module_id):
        """A stored module's record (as upload returns it); GpuprobeError NOT_FOUND if the
        daemon does not have it."""
        return _plain(self._call("GetModule", probe_pb2.GetModuleRequest(id=module_id)))


def _param_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
