"""A Session pickles as its .gcb path and pins; batch inference with
dask.distributed on a LocalCluster: each worker loads the program once,
results equal a single-process run, a worker that dies is retried."""
import os
import pickle
import shutil

import numpy as np
import pytest

import graphcc
from conftest import ROOT, plugin


@pytest.fixture(scope="module")
def demo_gcb(tmp_path_factory):
    d = tmp_path_factory.mktemp("gcb")
    return graphcc.compile(os.path.join(ROOT, "models", "demo", "model.onnx"),
                           ops=[plugin("demo")], path=d / "demo.gcb")


def batch(n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 64, 64)).astype(np.float32) for _ in range(n)]


def test_pickle_carries_path_and_pins(demo_gcb, tmp_path):
    s = graphcc.Session(demo_gcb, threads=1)
    data = pickle.dumps(s)
    assert len(data) < 4096  # the path and the pins, not the program
    t = pickle.loads(data)
    x = batch(1)[0]
    np.testing.assert_array_equal(s.run({"x": x})[0], t.run({"x": x})[0])
    assert pickle.loads(data)._runner.program is t._runner.program  # loaded once
    # A changed program is refused by its hash.
    copy = tmp_path / "copy.gcb"
    shutil.copy(demo_gcb, copy)
    data2 = pickle.dumps(graphcc.Session(copy))
    with open(copy, "ab") as f:
        f.write(b"\0")
    with pytest.raises(graphcc.ModelError, match="changed since the session was pickled"):
        pickle.loads(data2)
    with pytest.raises(pickle.PicklingError, match="compile the model first"):
        pickle.dumps(graphcc.Session(os.path.join(ROOT, "models", "demo", "model.onnx"),
                                     ops=[plugin("demo")]))


def infer(session, x):
    return session.run({"x": x})[0]


def infer_or_die_once(session, x, i, marker):
    # The first attempt at item 3 kills its worker process.
    if i == 3 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return infer(session, x)


def loads_in_this_process():
    return len(graphcc._programs)


def test_dask_batch_inference(demo_gcb, tmp_path):
    distributed = pytest.importorskip("distributed")
    xs = batch(12, seed=1)
    want = [infer(graphcc.Session(demo_gcb, threads=1), x) for x in xs]
    marker = str(tmp_path / "died")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        # Both workers must be up before the work is sent, or on a loaded
        # machine all of it may land on the one worker that is about to die.
        client.wait_for_workers(2, timeout=120)
        # The session travels with each task as its path and pins (not as
        # scattered data, which dies with the worker that holds it); each
        # process still loads the program once.
        sess = graphcc.Session(demo_gcb, threads=1)
        futs = [client.submit(infer_or_die_once, sess, x, i, marker, pure=False)
                for i, x in enumerate(xs)]
        got = client.gather(futs)
        loads = client.run(loads_in_this_process)
    assert os.path.exists(marker)  # a worker did die
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    # A worker restarted after the last task was handed out may have loaded
    # nothing; none loaded the program twice.
    assert all(n <= 1 for n in loads.values()) and sum(loads.values()) >= 1, loads
