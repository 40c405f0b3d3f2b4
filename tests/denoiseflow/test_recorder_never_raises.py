"""record() never raises: what cannot be serialized is replaced by a marker
and counted, and the rest of the event is kept. Checked on the wire, through
a recording transport (the network stand-in)."""

import json
import threading

import denoiseflow as df


class Wire:
    """Takes the recorder's POSTs and answers like the dashboard would."""

    def __init__(self):
        self.events, self.headers = [], []
        self.arrived = threading.Event()

    def post(self, url, body, headers):
        batch = json.loads(body)["batch"]
        self.events.extend(batch)
        self.headers.append(headers)
        self.arrived.set()
        return df.Reply(207, {}, json.dumps({"successes": [{"id": e["id"], "status": 201} for e in batch],
                                             "errors": []}).encode())


class Unprintable:
    def __str__(self):
        raise RuntimeError("no text for you")


def recorded(**fields):
    wire = Wire()
    recorder = df.Recorder("http://dashboard.invalid", "dd_x", transport=wire, flush_interval=0.01)
    try:
        ref = recorder.record("t1", "agent", **fields)
        assert recorder.flush(timeout=5)
        return ref, wire.events[-1]["body"], recorder.stats(), wire
    finally:
        recorder.close()


def test_content_whose_str_raises_becomes_a_marker():
    ref, body, stats, _ = recorded(content=Unprintable(), raw_input=Unprintable())
    assert body["content"] == body["raw_input"] == "<unserializable Unprintable: RuntimeError>"
    assert body["product_id"] == ref.product_id
    assert stats["unserializable"] == 2 and stats["sent"] == 1


def test_cyclic_metadata_is_cut_at_the_cycle():
    metadata = {"name": "loop"}
    metadata["self"] = metadata
    _, body, stats, _ = recorded(content="ok", metadata=metadata)
    assert body["metadata"] == {"name": "loop", "self": "<cycle>"}
    assert stats["unserializable"] == 1


def test_nan_in_metrics_becomes_text_and_the_rest_is_kept():
    _, body, stats, _ = recorded(content="ok", metrics={"vote_ratio": 0.6, "entropy": float("nan"),
                                                        "spread": float("inf")})
    assert body["metrics"] == {"vote_ratio": 0.6, "entropy": "NaN", "spread": "Infinity"}
    assert stats["unserializable"] == 2


def test_bytes_are_decoded_and_odd_objects_stringified():
    _, body, stats, _ = recorded(content=b"caf\xc3\xa9 \xff", metadata={"raw": b"\x00ok", "tags": {"a"},
                                                                       "obj": object, "bad": Unprintable()})
    assert body["content"] == "café \ufffd"
    assert body["metadata"]["raw"] == "\x00ok" and body["metadata"]["tags"] == ["a"]
    assert body["metadata"]["obj"] == "<class 'object'>"
    assert body["metadata"]["bad"] == "<unserializable Unprintable: RuntimeError>"
    assert stats["unserializable"] == 1


def test_odd_arguments_never_raise():
    wire = Wire()
    recorder = df.Recorder("http://dashboard.invalid", "dd_x", transport=wire, flush_interval=0.01)
    try:
        recorder.record("t1", "agent", parent_ids=[Unprintable()], metadata={1: "int key", (1, 2): "tuple key"})
        recorder.record("t1", "agent", timestamp=Unprintable())
        recorder.fuse(Unprintable(), "block", "why", trace_id="t1")
        recorder.review("t1", "incorrect", Unprintable())
        assert recorder.flush(timeout=5)
    finally:
        recorder.close()
    assert len(wire.events) == 3  # the event with an unprintable timestamp was dropped, and counted
    assert wire.events[0]["body"]["metadata"] == {"1": "int key", "(1, 2)": "tuple key"}
    assert recorder.stats()["dropped"] == 1


def test_requests_announce_the_sdk_version():
    *_, wire = recorded(content="ok")
    assert wire.headers[0]["User-Agent"] == f"denoiseflow/{df.__version__}"
