#!/usr/bin/env python3
"""Live test of the Grafana dashboard and the Prometheus rules (ctest
deploy_dashboard_live; deploy/grafana/README.md).

  dashboard_live_test.py --bin_dir=BUILD/bin [--prometheus=prometheus]
      [--dashboard=plrank-dashboard.json] [--rules=plrank.rules.yml]
      [--scrape_config=prometheus.yml] [--keep]

In a temporary directory: generate tiny data, train a small model (version
1) and publish a corrupt version 2 (so a load failure exists) and a smaller
version 3 that shadows version 1 (model config shadow_version, fraction 1,
so the shadow scoring series exist), plus a model
`wide` whose version 2 takes 12 features against version 1's 10 (so a
refused promotion exists), start the
real plrank-server on 127.0.0.1 (ports 0) and a real Prometheus scraping its
metrics port every second with the real rules file, evaluated every second.
Prometheus scrapes with the plrank-server job of prometheus.yml, its
kubernetes_sd_configs replaced by a file_sd target list that carries the
metadata Kubernetes SD would attach to the server's pod, next to a decoy pod
the relabelling must drop. Then plrank-loadgen sends Rank traffic (synthetic
documents, then the data file's queries), and
plrank-loadgen / plrank-client send requests for an unknown model (errors).

Checks (every failure is printed; exit 1 if any):
  static   the provisioning examples parse; every non-row panel, target,
           template variable and annotation uses the ${datasource}
           variable; panel ids are unique; every metric name a dashboard or
           rule expression reads is exported by the server's /metrics,
           produced by Prometheus (up, ...) or a recording rule.
  targets  the relabelling keeps exactly the server's pod, labelled with
           namespace and pod.
  rules    Prometheus loaded every rule and evaluates all without error.
  queries  through /api/v1/query, each must return at least one series:
           every dashboard variable query (label_values -> group by), every
           panel target and annotation (with $__rate_interval=15s etc., the
           variables once as ".*" and once as the values their queries
           returned), every recording rule's expression and its recorded
           name, and every alert's expression with its threshold
           comparisons (`OP number` at the end of an `or` arm) removed.
           Queries are retried for up to --settle_seconds while samples
           accumulate (rate() needs two samples). The setup's own error
           requests and failed load must show up too.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PROMETHEUS_DIR = os.path.join(os.path.dirname(HERE), "prometheus")

GRAFANA_GLOBALS = {
    "__rate_interval": "15s", "__interval": "5s", "__interval_ms": "5000",
    "__range": "60s", "__range_s": "60", "__range_ms": "60000",
}
# Series Prometheus itself attaches to every target.
PROMETHEUS_GENERATED = {
    "up", "scrape_duration_seconds", "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling", "scrape_series_added",
}
PROMQL_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "and",
    "or", "unless", "bool", "offset", "inf", "nan", "atan2",
}
THRESHOLD = re.compile(
    r"\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?-?[0-9][0-9.]*(?:e[+-]?[0-9]+)?"
    r"(?=\s*(?:$|\bor\b|\)))", re.IGNORECASE)

PROCESSES = []
FAILURES = []


def fail(what):
  FAILURES.append(what)
  print("FAIL:", what, flush=True)


def kill_all():
  for proc in reversed(PROCESSES):
    if proc.poll() is None:
      proc.terminate()
  deadline = time.time() + 5
  for proc in reversed(PROCESSES):
    try:
      proc.wait(max(0.1, deadline - time.time()))
    except subprocess.TimeoutExpired:
      proc.kill()
      proc.wait()


def on_signal(signum, frame):
  kill_all()
  sys.exit(128 + signum)


def die_with_parent():
  """Child setup: SIGTERM the child if this script dies, even by SIGKILL."""
  try:
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG,
                                                   signal.SIGTERM)
  except (OSError, AttributeError):
    pass


def start(cmd, **kwargs):
  proc = subprocess.Popen(cmd, preexec_fn=die_with_parent, **kwargs)
  PROCESSES.append(proc)
  return proc


def free_port():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def run(cmd, **kwargs):
  result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, preexec_fn=die_with_parent, **kwargs)
  if result.returncode != 0:
    raise RuntimeError(f"{' '.join(cmd)} exited {result.returncode}:\n"
                       f"{result.stdout}{result.stderr}")
  return result.stdout


def http_get(url, timeout=5):
  with urllib.request.urlopen(url, timeout=timeout) as response:
    return response.read().decode()


# --- PromQL helpers ---------------------------------------------------------

def metric_names(expr):
  """Metric names an expression reads (selectors outside function calls)."""
  s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
  s = re.sub(r"\{[^}]*\}", " ", s)
  s = re.sub(r"\[[^\]]*\]", " ", s)
  s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*"
             r"\([^)]*\)", " ", s)
  names = set()
  for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
    token = m.group(0)
    if m.start() > 0 and s[m.start() - 1] in "0123456789.$":
      continue  # a number, a duration (15m) or a leftover variable
    if s[m.end():].lstrip().startswith("("):
      continue  # function or aggregation
    if token.lower() in PROMQL_KEYWORDS:
      continue
    names.add(token)
  return names


def strip_thresholds(expr):
  return THRESHOLD.sub("", expr)


def substitute(expr, variables):
  def replace(m):
    name = m.group(1) or m.group(2)
    if name in GRAFANA_GLOBALS:
      return GRAFANA_GLOBALS[name]
    if name in variables:
      return variables[name]
    return m.group(0)
  out = re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", replace, expr)
  if "$" in out:
    raise ValueError(f"unknown variable left in {out!r}")
  return out


def promql_regex_literal(value):
  """`value` matched literally by a regex inside a PromQL "..." string."""
  escaped = re.sub(r"([.*+?()\[\]{}|^$\\])", r"\\\1", value)
  return escaped.replace("\\", "\\\\")


def label_values_query(query):
  """label_values(expr, label) -> (PromQL, label); label_values(label) ->
  (None, label)."""
  m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", query, re.S)
  if m:
    return f"group by ({m.group(2)}) ({m.group(1)})", m.group(2)
  m = re.fullmatch(r"\s*label_values\(\s*(\w+)\s*\)\s*", query)
  if m:
    return None, m.group(1)
  raise ValueError(f"unsupported variable query {query!r}")


# --- dashboard --------------------------------------------------------------

def uses_datasource_variable(ds):
  if isinstance(ds, str):
    return ds in ("$datasource", "${datasource}")
  return isinstance(ds, dict) and ds.get("uid") in ("$datasource",
                                                     "${datasource}")


def all_panels(dashboard):
  for panel in dashboard.get("panels", []):
    yield panel
    for inner in panel.get("panels", []):  # collapsed rows
      yield inner


def dashboard_queries(dashboard):
  """(where, expr) for every panel target and annotation query."""
  out = []
  for panel in all_panels(dashboard):
    for target in panel.get("targets", []):
      if target.get("expr"):
        out.append((f"panel {panel['id']} '{panel.get('title')}' "
                    f"{target.get('refId')}", target["expr"]))
  for annotation in dashboard.get("annotations", {}).get("list", []):
    if annotation.get("expr"):
      out.append((f"annotation '{annotation.get('name')}'",
                  annotation["expr"]))
  return out


def variable_query(variable):
  query = variable.get("query")
  if isinstance(query, dict):
    query = query.get("query")
  return query


def static_checks(dashboard, rules, exported, recorded):
  ids = {}
  for panel in all_panels(dashboard):
    pid = panel.get("id")
    if pid in ids:
      fail(f"panel id {pid} used by '{ids[pid]}' and '{panel.get('title')}'")
    ids[pid] = panel.get("title")
    if panel.get("type") == "row":
      continue
    if not uses_datasource_variable(panel.get("datasource")):
      fail(f"panel {pid} '{panel.get('title')}': datasource "
           f"{panel.get('datasource')!r} is not ${{datasource}}")
    if not panel.get("targets"):
      fail(f"panel {pid} '{panel.get('title')}' has no targets")
    for target in panel.get("targets", []):
      if "datasource" in target and not uses_datasource_variable(
          target["datasource"]):
        fail(f"panel {pid} target {target.get('refId')}: datasource "
             f"{target['datasource']!r} is not ${{datasource}}")
  templating = dashboard.get("templating", {}).get("list", [])
  if not any(v.get("type") == "datasource" and v.get("name") == "datasource"
             and v.get("query") == "prometheus" for v in templating):
    fail("no Prometheus datasource variable named 'datasource'")
  for variable in templating:
    if variable.get("type") == "query" and not uses_datasource_variable(
        variable.get("datasource")):
      fail(f"variable {variable.get('name')}: datasource is not "
           "${datasource}")
  for annotation in dashboard.get("annotations", {}).get("list", []):
    if annotation.get("expr") and not uses_datasource_variable(
        annotation.get("datasource")):
      fail(f"annotation {annotation.get('name')}: datasource is not "
           "${datasource}")
  known = exported | recorded | PROMETHEUS_GENERATED
  expressions = dashboard_queries(dashboard)
  for variable in templating:
    if variable.get("type") == "query":
      expr, _ = label_values_query(variable_query(variable))
      if expr is not None:
        expressions.append((f"variable {variable.get('name')}", expr))
  for rule in rules:
    expressions.append((f"rule {rule.get('record') or rule.get('alert')}",
                        rule["expr"]))
  for where, expr in expressions:
    for name in sorted(metric_names(expr) - known):
      fail(f"{where}: metric {name} is neither exported by plrank-server "
           "nor a recording rule")
  print(f"static: {len(ids)} panels, {len(expressions)} expressions checked",
        flush=True)


def provisioning_checks():
  """The provisioning examples parse and name a Prometheus data source and
  a file dashboard provider."""
  directory = os.path.join(HERE, "provisioning")
  with open(os.path.join(directory, "datasources.yml")) as f:
    datasources = yaml.safe_load(f).get("datasources") or []
  if not any(d.get("type") == "prometheus" for d in datasources):
    fail("provisioning/datasources.yml has no prometheus data source")
  with open(os.path.join(directory, "dashboards.yml")) as f:
    providers = yaml.safe_load(f).get("providers") or []
  if not any(p.get("type") == "file" and (p.get("options") or {}).get("path")
             for p in providers):
    fail("provisioning/dashboards.yml has no file provider with a path")


# --- the live setup -------------------------------------------------------

def wait_for_lines(proc, patterns, timeout):
  """Reads proc's stdout until every regex matched; returns the groups."""
  found = {}
  lines = []
  def reader():
    for line in proc.stdout:
      lines.append(line)
      for key, pattern in patterns.items():
        m = re.search(pattern, line)
        if m and key not in found:
          found[key] = m.group(1)
  thread = threading.Thread(target=reader, daemon=True)
  thread.start()
  deadline = time.time() + timeout
  while time.time() < deadline and len(found) < len(patterns):
    if proc.poll() is not None:
      break
    time.sleep(0.05)
  if len(found) < len(patterns):
    raise RuntimeError(f"server did not print {sorted(patterns)}: "
                       f"{''.join(lines)}")
  return found


def prometheus_config(scrape_config_path, rules_path, metrics_address,
                      grpc_address, targets_path):
  with open(scrape_config_path) as f:
    production = yaml.safe_load(f)
  job = next(j for j in production["scrape_configs"]
             if j.get("job_name") == "plrank-server")
  job = dict(job)
  job.pop("kubernetes_sd_configs", None)
  job["scrape_interval"] = "1s"
  job["scrape_timeout"] = "1s"
  job["file_sd_configs"] = [{"files": [targets_path], "refresh_interval": "1s"}]
  pod = {
      "__meta_kubernetes_namespace": "plrank-test",
      "__meta_kubernetes_pod_label_app_kubernetes_io_name": "plrank-server",
      "__meta_kubernetes_pod_label_app_kubernetes_io_instance": "live-test",
      "__meta_kubernetes_pod_node_name": "node-1",
      "__meta_kubernetes_pod_phase": "Running",
      "__meta_kubernetes_pod_container_name": "server",
  }
  targets = [
      {"targets": [metrics_address],
       "labels": dict(pod, __meta_kubernetes_pod_name="plrank-server-0",
                      __meta_kubernetes_pod_container_port_name="metrics")},
      # The same pod's gRPC port: must be dropped by the relabelling.
      {"targets": [grpc_address],
       "labels": dict(pod, __meta_kubernetes_pod_name="plrank-server-0",
                      __meta_kubernetes_pod_container_port_name="grpc")},
      # Another application's pod: must be dropped.
      {"targets": ["127.0.0.1:1"],
       "labels": dict(pod, __meta_kubernetes_pod_name="other-0",
                      __meta_kubernetes_pod_label_app_kubernetes_io_name="other",
                      __meta_kubernetes_pod_container_port_name="metrics")},
  ]
  with open(targets_path, "w") as f:
    json.dump(targets, f)
  return {
      "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
      "rule_files": [rules_path],
      "scrape_configs": [job],
  }


class Prometheus:
  def __init__(self, address):
    self.base = f"http://{address}"

  def get(self, path, **params):
    url = self.base + path
    if params:
      url += "?" + urllib.parse.urlencode(params)
    return json.loads(http_get(url))

  def query(self, expr):
    try:
      return self.get("/api/v1/query", query=expr)["data"]["result"], None
    except urllib.error.HTTPError as e:
      return None, e.read().decode()


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--bin_dir", required=True)
  parser.add_argument("--prometheus", default=shutil.which("prometheus")
                      or "prometheus")
  parser.add_argument("--dashboard",
                      default=os.path.join(HERE, "plrank-dashboard.json"))
  parser.add_argument("--rules", default=os.path.join(
      PROMETHEUS_DIR, "rules", "plrank.rules.yml"))
  parser.add_argument("--scrape_config", default=os.path.join(
      PROMETHEUS_DIR, "prometheus.yml"))
  parser.add_argument("--load_seconds", type=float, default=4)
  parser.add_argument("--settle_seconds", type=float, default=20)
  parser.add_argument("--keep", action="store_true",
                      help="keep the temporary directory")
  args = parser.parse_args()
  signal.signal(signal.SIGTERM, on_signal)
  signal.signal(signal.SIGINT, on_signal)
  bin_dir = os.path.abspath(args.bin_dir)
  tool = lambda name: os.path.join(bin_dir, name)
  with open(args.dashboard) as f:
    dashboard = json.load(f)
  with open(args.rules) as f:
    rule_groups = yaml.safe_load(f)["groups"]
  rules = [rule for group in rule_groups for rule in group["rules"]]
  recorded = {rule["record"] for rule in rules if "record" in rule}

  tmp = tempfile.mkdtemp(prefix="plrank-dashboard-")
  started = time.time()
  try:
    # Data, a good version 1 and a corrupt version 2.
    data = os.path.join(tmp, "data.txt")
    run([tool("plrank-datagen"), "--queries=40", "--mean_docs=20",
         "--features=10", f"--out={data}"])
    models = os.path.join(tmp, "models")
    os.makedirs(os.path.join(models, "demo", "1"))
    os.makedirs(os.path.join(models, "demo", "2"))
    os.makedirs(os.path.join(models, "demo", "3"))
    run([tool("plrank-train"), f"--train={data}", "--trees=10", "--leaves=7",
         "--num_threads=1", "--quiet",
         f"--model_out={os.path.join(models, 'demo', '1', 'model.pb')}"])
    with open(os.path.join(models, "demo", "2", "model.pb"), "wb") as f:
      f.write(b"not a model")
    # Version 3, another model of the same data, is demo's shadow.
    run([tool("plrank-train"), f"--train={data}", "--trees=3", "--leaves=3",
         "--num_threads=1", "--quiet",
         f"--model_out={os.path.join(models, 'demo', '3', 'model.pb')}"])
    # The config names the models the server found by itself before, with
    # the same default policy, except that demo serves only versions 1 and 2
    # (3 is the shadow, never the default).
    model_config = os.path.join(tmp, "models.config")
    with open(model_config, "w") as f:
      f.write('models {\n  name: "demo"\n'
              '  version_policy { specific { versions: [1, 2] } }\n'
              '  shadow_version: 3\n  shadow_fraction: 1\n}\n'
              'models { name: "wide" }\n')
    wide_data = os.path.join(tmp, "wide.txt")
    run([tool("plrank-datagen"), "--queries=20", "--mean_docs=10",
         "--features=12", f"--out={wide_data}"])
    def publish_wide(version, train):
      # Trained aside, then renamed into place: the server never sees a
      # version directory without its final model.
      staging = os.path.join(tmp, f"wide-{version}")
      os.makedirs(staging)
      run([tool("plrank-train"), f"--train={train}", "--trees=2",
           "--leaves=3", "--num_threads=1", "--quiet",
           f"--model_out={os.path.join(staging, 'model.pb')}"])
      os.makedirs(os.path.join(models, "wide"), exist_ok=True)
      os.rename(staging, os.path.join(models, "wide", version))
    publish_wide("1", data)

    server_log = open(os.path.join(tmp, "server.log"), "w")
    server = start([tool("plrank-server"), f"--model_base_path={models}",
                    f"--model_config_file={model_config}",
                    "--host=127.0.0.1", "--port=0", "--metrics_port=0",
                    "--poll_interval_seconds=1"],
                   stdout=subprocess.PIPE, stderr=server_log, text=True)
    ports = wait_for_lines(server, {"grpc": r"listening on (\S+)",
                                    "metrics": r"metrics on (\S+)"}, 15)
    grpc, metrics = ports["grpc"], ports["metrics"]
    print(f"plrank-server: gRPC {grpc}, metrics {metrics}", flush=True)
    # wide's 12-feature version 2 appears once version 1 (10 features)
    # serves, so the server refuses to promote it.
    deadline = time.time() + 30
    while "event=default_version_changed model=wide" not in open(
        os.path.join(tmp, "server.log")).read():
      if time.time() > deadline:
        raise RuntimeError("model wide version 1 did not load; see "
                           + os.path.join(tmp, "server.log"))
      time.sleep(0.1)
    publish_wide("2", wide_data)

    prom_address = f"127.0.0.1:{free_port()}"
    config = prometheus_config(args.scrape_config, os.path.abspath(args.rules),
                               metrics, grpc,
                               os.path.join(tmp, "targets.json"))
    config_path = os.path.join(tmp, "prometheus.yml")
    with open(config_path, "w") as f:
      yaml.safe_dump(config, f)
    prom_log = open(os.path.join(tmp, "prometheus.log"), "w")
    start([args.prometheus, f"--config.file={config_path}",
           f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
           f"--web.listen-address={prom_address}"],
          stdout=prom_log, stderr=subprocess.STDOUT)
    prom = Prometheus(prom_address)
    deadline = time.time() + 15
    while True:
      try:
        http_get(prom.base + "/-/ready", timeout=1)
        break
      except (urllib.error.URLError, ConnectionError, OSError):
        if time.time() > deadline:
          raise RuntimeError("Prometheus did not become ready; see "
                             + os.path.join(tmp, "prometheus.log"))
        time.sleep(0.2)
    print(f"prometheus: {prom_address}", flush=True)

    # Relabelling: only the server's metrics port survives. The scrape
    # manager applies discovered targets every 5s; wait for the first scrape.
    deadline = time.time() + 20
    while True:
      active = prom.get("/api/v1/targets")["data"]["activeTargets"]
      ours = [t for t in active if t["labels"].get("job") == "plrank-server"]
      if any(t["health"] == "up" for t in ours) or time.time() > deadline:
        break
      time.sleep(0.5)
    if len(ours) != 1 or ours[0]["scrapeUrl"] != f"http://{metrics}/metrics":
      fail(f"relabelling kept {[t['scrapeUrl'] for t in ours]}, expected "
           f"only http://{metrics}/metrics")
    else:
      labels = ours[0]["labels"]
      for key, value in (("namespace", "plrank-test"),
                         ("pod", "plrank-server-0")):
        if labels.get(key) != value:
          fail(f"target label {key}={labels.get(key)!r}, expected {value!r}")
      print(f"target {ours[0]['scrapeUrl']} {ours[0]['health']} after "
            f"{time.time() - started:.1f}s", flush=True)

    # Traffic: good Rank calls, then errors (unknown model: Rank through
    # loadgen, GetModelStatus through plrank-client).
    run([tool("plrank-loadgen"), f"--target={grpc}", "--model=demo",
         "--synthetic_docs=20", "--concurrency=2",
         f"--duration_seconds={args.load_seconds}", "--requests=100000000"])
    # Requests from the data file too, over several scrapes: on synthetic
    # uniform features the small shadow model can tie every document,
    # leaving Kendall tau undefined (and its histogram empty).
    run([tool("plrank-loadgen"), f"--target={grpc}", "--model=demo",
         f"--data={data}", "--concurrency=1", "--duration_seconds=3",
         "--requests=100000000"])
    subprocess.run([tool("plrank-loadgen"), f"--target={grpc}",
                    "--model=no_such_model", "--features=10",
                    "--synthetic_docs=5", "--concurrency=1", "--requests=20",
                    "--duration_seconds=1"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=die_with_parent)
    subprocess.run([tool("plrank-client"), f"--target={grpc}",
                    "--model=no_such_model", "status"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=die_with_parent)

    exposition = http_get(f"http://{metrics}/metrics")
    exported = {line.split("{")[0].split(" ")[0]
                for line in exposition.splitlines()
                if line and not line.startswith("#")}
    static_checks(dashboard, rules, exported, recorded)
    provisioning_checks()

    # Build the query list; variables resolve through their own queries.
    templating = [v for v in dashboard["templating"]["list"]
                  if v.get("type") == "query"]
    queries = []  # (where, PromQL) or (where, None) for label_values(label)

    def resolve_variables():
      values = {}
      for variable in templating:
        expr, label = label_values_query(variable_query(variable))
        if expr is None:
          found = prom.get(f"/api/v1/label/{label}/values")["data"]
        else:
          result, error = prom.query(substitute(expr, values))
          found = sorted({s["metric"].get(label, "") for s in result or []})
        if not found:
          return None, variable["name"]
        values[variable["name"]] = "|".join(promql_regex_literal(v)
                                            for v in found)
      return values, None

    match_all = {v["name"]: ".*" for v in templating}
    for where, expr in dashboard_queries(dashboard):
      queries.append((where + " [all]", substitute(expr, match_all)))
    # The traffic really produced errors (the dashboard's error panels and
    # the error-ratio rules must be exercised on non-OK series).
    queries.append(("setup: error requests recorded",
                    'plrank_requests_total{code!="OK"}'))
    queries.append(("setup: failed model load recorded",
                    'plrank_model_loads_total{result="failure"}'))
    queries.append(("setup: shadow copies scored",
                    'plrank_shadow_requests_total{result="scored"}'))
    for rule in rules:
      if "record" in rule:
        queries.append((f"recording rule {rule['record']} (expr)",
                        rule["expr"]))
        queries.append((f"recording rule {rule['record']} (recorded)",
                        rule["record"]))
      else:
        stripped = strip_thresholds(rule["expr"])
        if stripped.strip() == rule["expr"].strip():
          fail(f"alert {rule['alert']}: no threshold comparison to strip")
        queries.append((f"alert {rule['alert']}", stripped))

    deadline = time.time() + args.settle_seconds
    while True:
      empty = []
      values, unresolved = resolve_variables()
      if values is None:
        empty.append((f"variable {unresolved}", "(its query returned no "
                      "values)"))
        concrete = []
      else:
        concrete = [(where + " [" + ", ".join(
                        f"{k}={v}" for k, v in values.items()) + "]",
                     substitute(expr, values))
                    for where, expr in dashboard_queries(dashboard)]
      nan_only = []
      for where, expr in queries + concrete:
        result, error = prom.query(expr)
        if result and all(sample["value"][1] == "NaN" for sample in result):
          nan_only.append(where)
        if not result:
          empty.append((where, expr if error is None else f"{expr}\n  "
                        f"error: {error}"))
      if not empty or time.time() > deadline:
        break
      time.sleep(1)
    for where, expr in empty:
      fail(f"{where}: empty result for\n  {expr}")
    for where in nan_only:
      print(f"note: {where}: only NaN (no observations in the window)")
    print(f"queries: {len(queries) + len(concrete)} run, "
          f"{len(empty)} empty", flush=True)

    # Every rule evaluates cleanly.
    groups = prom.get("/api/v1/rules")["data"]["groups"]
    loaded = [r for g in groups for r in g["rules"]]
    if len(loaded) != len(rules):
      fail(f"Prometheus loaded {len(loaded)} rules, the file has "
           f"{len(rules)}")
    for rule in loaded:
      if rule.get("health") != "ok":
        fail(f"rule {rule['name']}: health {rule.get('health')} "
             f"{rule.get('lastError', '')}")
    if server.poll() is not None:
      fail(f"plrank-server exited with {server.returncode}")
  except Exception as e:  # report setup errors as a failure, then clean up
    fail(f"setup: {e}")
  finally:
    kill_all()
    if args.keep or FAILURES:
      print(f"kept {tmp} (logs: server.log, prometheus.log)")
    if not args.keep:
      if not FAILURES:
        shutil.rmtree(tmp, ignore_errors=True)
  print(f"{'FAIL' if FAILURES else 'PASS'}: {len(FAILURES)} failure(s) in "
        f"{time.time() - started:.1f}s", flush=True)
  return 1 if FAILURES else 0


if __name__ == "__main__":
  sys.exit(main())
