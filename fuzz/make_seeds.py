#!/usr/bin/python3
"""Writes the committed seed corpora of the fuzz targets: fuzz/corpus/<target>/.

    /usr/bin/python3 fuzz/make_seeds.py  # from the checkout; needs protoc and
                                        # python3-protobuf (scripts/setup.sh)

Deterministic: re-running rewrites the same bytes. Regression seeds (inputs
that once crashed a target) live next to these as regression-* files and are
never rewritten. Binary seeds start with the target's option byte (see each
fuzzer's header comment).
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def load_protos():
    out = tempfile.mkdtemp(prefix="plrank-seeds-")
    subprocess.check_call(
        ["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out", out,
         "plrank/v1/model.proto", "plrank/v1/ranker.proto",
         "plrank/v1/server_config.proto"])
    sys.path.insert(0, out)
    from plrank.v1 import model_pb2, ranker_pb2  # noqa: E402
    return out, model_pb2, ranker_pb2


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def models(model_pb2):
    def tree(split, thr, dl, left, right, leaves):
        t = model_pb2.Tree()
        t.split_feature.extend(split)
        t.threshold.extend(thr)
        t.default_left.extend(dl)
        t.left_child.extend(left)
        t.right_child.extend(right)
        t.leaf_value.extend(leaves)
        return t

    one = model_pb2.Model(format_version=1, objective="plrank", num_features=2,
                          num_outputs=1, base_score=[0.5],
                          created_unix_seconds=1700000000)
    one.trees.append(tree([0], [1.0], [True], [-1], [-2], [0.25, -0.5]))
    one.parameters["trees"] = "1"
    it = one.training.iterations.add(iteration=1, train_loss=0.7)
    it.valid["ndcg@10"] = 0.5
    one.training.best_iteration = 1

    deep = model_pb2.Model(format_version=1, objective="lambdamart",
                           num_features=5, num_outputs=1)
    deep.trees.append(tree([0, 1, 4], [0.5, -1.0, 3.0], [True, False, True],
                           [1, -1, -3], [2, -2, -4], [-1.0, 0.5, 2.0, -0.25]))
    deep.trees.append(tree([], [], [], [], [], [0.125]))
    deep.trees.append(tree([3], [0.0], [False], [-1], [-2], [1e-3, -1e-3]))
    deep.feature_names.extend(["a", "b", "c", "d", "e"])

    multi = model_pb2.Model(format_version=1, objective="mcrank",
                            num_features=3, num_outputs=3,
                            transform=model_pb2.SCORE_TRANSFORM_EXPECTED_RELEVANCE,
                            base_score=[0.1, 0.2, 0.3])
    for k in range(6):
        multi.trees.append(tree([k % 3], [0.5 * k], [k % 2 == 0], [-1], [-2],
                                [0.1 * k, -0.1 * k]))

    linear = model_pb2.Model(format_version=1, objective="ca", num_features=4,
                             num_outputs=1, linear_weights=[0.5, -1.0, 0.0, 2.0])
    return {"one_split": one, "three_trees": deep, "multi_output": multi,
            "linear_only": linear}


def model_seeds(model_pb2):
    for name, model in models(model_pb2).items():
        payload = model.SerializeToString(deterministic=True)
        envelope = model_pb2.ModelFile(format_version=1, payload=payload,
                                       checksum=fnv1a64(payload),
                                       checksum_algorithm="fnv1a64")
        write("model_parser", name + ".file",
              b"\x00" + envelope.SerializeToString(deterministic=True))
        write("model_parser", name + ".payload", b"\x01" + payload)


def dense(ranker_pb2, doc_id, values):
    d = ranker_pb2.Document(id=doc_id)
    d.dense.values.extend(values)
    return d


def sparse(ranker_pb2, doc_id, indices, values):
    d = ranker_pb2.Document(id=doc_id)
    d.sparse.indices.extend(indices)
    d.sparse.values.extend(values)
    return d


def request_seeds(ranker_pb2):
    nan = float("nan")
    r = ranker_pb2.RankRequest(query_id="q1")
    r.model_spec.name = "fuzz"
    r.documents.extend([
        dense(ranker_pb2, "a", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),
        dense(ranker_pb2, "b", [1.0, -2.0, 4.0, nan, 0.0, -1.0]),
        sparse(ranker_pb2, "c", [0, 4], [0.7, 0.25]),
        sparse(ranker_pb2, "d", [], [])])
    write("rank_request", "mixed", b"\x00" + r.SerializeToString(deterministic=True))
    r.top_k = 2
    write("rank_request", "top2", b"\x00" + r.SerializeToString(deterministic=True))
    ties = ranker_pb2.RankRequest(query_id="ties")
    for i in range(5):
        ties.documents.append(dense(ranker_pb2, str(i), [0.0] * 6))
    write("rank_request", "ties_small_limit",
          b"\x01" + ties.SerializeToString(deterministic=True))
    bad = ranker_pb2.RankRequest()
    bad.documents.extend([sparse(ranker_pb2, "x", [3, 1], [1.0, 2.0]),
                          dense(ranker_pb2, "y", [float("inf")] * 6)])
    write("rank_request", "invalid", b"\x00" + bad.SerializeToString(deterministic=True))

    e = ranker_pb2.EvaluateRequest(per_query=True)
    e.model_spec.name = "fuzz"
    q = e.queries.add(query_id="q1", labels=[2, 0, 1])
    q.documents.extend([dense(ranker_pb2, "a", [0.1] * 6),
                        sparse(ranker_pb2, "b", [1, 5], [3.0, -1.0]),
                        dense(ranker_pb2, "c", [nan] * 6)])
    q = e.queries.add(query_id="empty", labels=[0, 0])
    q.documents.extend([sparse(ranker_pb2, "d", [0], [1.0]),
                        sparse(ranker_pb2, "e", [2], [1.0])])
    write("evaluate_request", "two_queries",
          b"\x00" + e.SerializeToString(deterministic=True))
    e.skip_empty_queries = True
    e.ndcg_at.extend([1, 2, 100])
    write("evaluate_request", "skip_cutoffs_stream",
          b"\x02" + e.SerializeToString(deterministic=True))
    write("evaluate_request", "small_limits",
          b"\x03" + e.SerializeToString(deterministic=True))
    big = ranker_pb2.EvaluateRequest()
    q = big.queries.add(query_id="big", labels=[31, 0])
    q.documents.extend([sparse(ranker_pb2, "a", [0], [1.0]),
                        sparse(ranker_pb2, "b", [0], [0.0])])
    write("evaluate_request", "label31",
          b"\x00" + big.SerializeToString(deterministic=True))


LETOR = {
    "qid_basic": "\x00" + "2 qid:1 1:0.5 2:1 3:-0.25 # doc a\n0 qid:1 1:NULL 3:1e-3\n"
                 "1 qid:2 2:nan 10:4\r\n\n# comment\n0 qid:2 1:+1 2:2.0\n",
    "fixed_width": "\x01" + "3 qid:a 1:1\n0 qid:a 1:0\n",   # --num_features=1
    "duplicates_last": "\x02" + "1 qid:1 1:1 1:2 2:3\n0 qid:1 2:1\n",
    "noncontiguous": "\x04" + "1 qid:1 1:1\n0 qid:2 1:0\n2 qid:1 2:1\n",
    "lightgbm_form": "\x00" + "1 1:0.5 2:0.1\n0 1:0.1\n2 2:1\n\x002\n1\n",
    "default_cap": "\x08" + "1 qid:1 1:1 2000:1\n0 qid:1 3:1\n",
    # Hostile inputs of issue 10: an index of 2^24, past the default cap.
    "hostile_index_2p24": "\x08" + "1 qid:1 16777216:0.5\n",
    "bad_tokens": "\x00" + "1.5 qid:1 1:1\n-1 qid:1 0:1\nx qid: 1:inf 2:1e40 3:\n",
}

SERVER_CONFIG = {
    "readme": 'models {\n  name: "web"\n  version_policy { latest { num_versions: 1 } }\n'
              '  version_labels { key: "stable" value: 3 }\n'
              '  version_labels { key: "canary" value: 4 }\n}\n'
              'models { name: "news" base_path: "/other/dir/news" }\n',
    "specific": '17\nmodels { name: "m-1.v2" version_policy { specific { versions: [3, 5] } } }\n',
    "all": 'models { name: "a" version_policy { all {} } }\nmodels { name: "b" }\n',
    "invalid": 'models { name: ".hidden" }\nmodels { name: "x" version_labels { key: "" value: -1 } }\n',
    "version_name_only": "9223372036854775807\n",
    "shadow": 'models {\n  name: "web"\n  version_labels { key: "c" value: 4 }\n'
              '  shadow_label: "c"\n  shadow_fraction: 0.25\n}\n'
              'models { name: "news" shadow_version: 2 shadow_fraction: 1.5 }\n',
}


def lightgbm_tree(splits, leaves):
    """One LightGBM tree block; splits: (column, threshold, decision_type,
    left, right)."""
    def join(values):
        return " ".join(str(v) for v in values)
    return ("num_leaves=%d\nnum_cat=0\nsplit_feature=%s\nsplit_gain=%s\n"
            "threshold=%s\ndecision_type=%s\nleft_child=%s\nright_child=%s\n"
            "leaf_value=%s\nleaf_weight=%s\nleaf_count=%s\n"
            "internal_value=%s\ninternal_weight=%s\ninternal_count=%s\n"
            "is_linear=0\nshrinkage=0.1\n\n\n") % (
        len(leaves), join(s[0] for s in splits), join("1.5" for _ in splits),
        join(s[1] for s in splits), join(s[2] for s in splits),
        join(s[3] for s in splits), join(s[4] for s in splits),
        join(leaves), join("1" for _ in leaves), join("7" for _ in leaves),
        join("0" for _ in splits), join("1" for _ in splits),
        join("7" for _ in splits))


def lightgbm_model(trees, columns=4, tail=""):
    names = " ".join("Column_%d" % c for c in range(columns))
    infos = " ".join(["none"] + ["[0:1]"] * (columns - 1))
    text = ("tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\n"
            "label_index=0\nmax_feature_idx=%d\nobjective=lambdarank\n"
            "feature_names=%s\nfeature_infos=%s\ntree_sizes=%s\n\n") % (
        columns - 1, names, infos, " ".join("100" for _ in trees))
    for i, tree in enumerate(trees):
        text += "Tree=%d\n%s" % (i, tree)
    return text + "end of trees\n" + tail


# decision_type: bit 1 default left, bits 2-3 missing type (1 zero, 2 NaN).
LIGHTGBM_TREES = [
    lightgbm_tree([(1, "0.5", 10, -1, 1), (2, "0.25", 4, -2, -3)],
                  ["0.10000000000000001", "-0.20000000000000001", "0.3"]),
    lightgbm_tree([(3, "1.0000000180025095e-35", 2, 1, -1),
                   (1, "0.98999999999999999", 8, -2, -3)],
                  ["-0.05", "0.125", "0.0625"]),
]


def lightgbm_seeds():
    full_tail = ("\nfeature_importances:\nColumn_1=2\nColumn_2=1\nColumn_3=1\n"
                 "\nparameters:\n[boosting: gbdt]\n[objective: lambdarank]\n"
                 "\nend of parameters\n\npandas_categorical:null\n")
    letor = lightgbm_model(LIGHTGBM_TREES, tail=full_tail)
    write("lightgbm_import", "letor_columns.txt", "\x01" + letor)
    write("lightgbm_import", "matrix_columns.txt",
          "\x00" + lightgbm_model([lightgbm_tree(
              [(0, "0.5", 2, -1, -2)], ["1.5", "-1.5"])], columns=2))
    # A file cut off inside its second tree, as a crashed writer leaves it.
    write("lightgbm_import", "half_written.txt",
          "\x01" + letor[:letor.index("Tree=1") + 40])


def main():
    proto_dir, model_pb2, ranker_pb2 = load_protos()
    try:
        for target in ("model_parser", "rank_request", "evaluate_request",
                       "letor_reader", "server_config", "xgboost_import",
                       "lightgbm_import"):
            directory = os.path.join(CORPUS, target)
            if os.path.isdir(directory):
                for name in os.listdir(directory):
                    if not name.startswith("regression-"):
                        os.remove(os.path.join(directory, name))
        model_seeds(model_pb2)
        request_seeds(ranker_pb2)
        for name, text in LETOR.items():
            write("letor_reader", name, text)
        for name, text in SERVER_CONFIG.items():
            write("server_config", name, text)
        testdata = os.path.join(ROOT, "tests", "unit", "model", "testdata")
        for name in ("xgb_rank_small.json", "xgb_logistic_small.json",
                     "xgb_rank_small.ubj", "xgb_logistic_small.ubj"):
            with open(os.path.join(testdata, name), "rb") as f:
                write("xgboost_import", name, f.read())
        write("xgboost_import", "typed_nulls.ubj",
              b"{i\x07learner[$Z#L\x40" + b"\x00" * 7 + b"}")
        write("xgboost_import", "one_split.json",
              '{"learner":{"feature_names":[],"gradient_booster":{"name":"gbtree",'
              '"model":{"trees":[{"tree_param":{"num_nodes":"5","num_deleted":"2"},'
              '"left_children":[1,-1,-1,-1,-1],"right_children":[2,-1,-1,-1,-1],'
              '"split_indices":[0,0,0,0,0],"split_conditions":[1.0,0.25,-0.5,9.0,9.0],'
              '"default_left":[1,0,0,0,0],"loss_changes":[3.0,0,0,0,0],'
              '"split_type":[0,0,0,0,0]}]}},"learner_model_param":{"base_score":"1E0",'
              '"num_class":"0","num_feature":"2","num_target":"1"},'
              '"objective":{"name":"reg:squarederror"}},"version":[1,7,4]}')
        lightgbm_seeds()
    finally:
        shutil.rmtree(proto_dir)


if __name__ == "__main__":
    main()
