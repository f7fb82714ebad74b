#!/usr/bin/env python3
"""promtool checks of deploy/prometheus (ctest deploy_promtool_check/_test).

  check_prometheus.py check [--promtool=promtool]
      promtool check config prometheus.yml + promtool check rules rules/*.yml
  check_prometheus.py test [--promtool=promtool]
      promtool test rules tests/*.yml

Debian's Prometheus is built without Kubernetes service discovery, so its
promtool rejects `kubernetes_sd_configs` as an unknown field. `check`
therefore validates each kubernetes_sd_configs block here (known fields,
role, and that every __meta_kubernetes_* label the relabelling reads exists
for that role, per Prometheus 2.42's documentation), replaces it with an
equivalent file_sd_configs, and hands the rest, relabel_configs included, to
promtool. Exit status 0 only if everything passes.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

# Fields of <kubernetes_sd_config> in Prometheus 2.42 (HTTP client fields
# included).
K8S_SD_FIELDS = {
    "api_server", "role", "kubeconfig_file", "namespaces", "selectors",
    "attach_metadata", "basic_auth", "authorization", "oauth2", "proxy_url",
    "follow_redirects", "enable_http2", "tls_config",
}
K8S_ROLES = {"node", "service", "pod", "endpoints", "endpointslice",
             "ingress"}
# Meta labels per role (prefix match for the <name>-suffixed families).
POD_META = [
    "__meta_kubernetes_namespace", "__meta_kubernetes_pod_name",
    "__meta_kubernetes_pod_ip", "__meta_kubernetes_pod_label_",
    "__meta_kubernetes_pod_labelpresent_", "__meta_kubernetes_pod_annotation_",
    "__meta_kubernetes_pod_annotationpresent_",
    "__meta_kubernetes_pod_container_init",
    "__meta_kubernetes_pod_container_name",
    "__meta_kubernetes_pod_container_image",
    "__meta_kubernetes_pod_container_port_name",
    "__meta_kubernetes_pod_container_port_number",
    "__meta_kubernetes_pod_container_port_protocol",
    "__meta_kubernetes_pod_ready", "__meta_kubernetes_pod_phase",
    "__meta_kubernetes_pod_node_name", "__meta_kubernetes_pod_host_ip",
    "__meta_kubernetes_pod_uid", "__meta_kubernetes_pod_controller_kind",
    "__meta_kubernetes_pod_controller_name",
]
SERVICE_META = [
    "__meta_kubernetes_namespace", "__meta_kubernetes_service_",
]
ENDPOINTS_META = SERVICE_META + POD_META + [
    "__meta_kubernetes_endpoints_", "__meta_kubernetes_endpoint_",
    "__meta_kubernetes_endpointslice_",
]
ROLE_META = {
    "pod": POD_META,
    "service": SERVICE_META,
    "endpoints": ENDPOINTS_META,
    "endpointslice": ENDPOINTS_META,
    "node": ["__meta_kubernetes_node_"],
    "ingress": ["__meta_kubernetes_namespace", "__meta_kubernetes_ingress_"],
}
PARTIAL_FAMILIES = ("_label_", "_labelpresent_", "_annotation_",
                    "_annotationpresent_", "_service_", "_node_",
                    "_endpoints_", "_endpoint_", "_endpointslice_",
                    "_ingress_")


def meta_label_known(label, role):
  for known in ROLE_META[role]:
    if known.endswith(PARTIAL_FAMILIES) or known.endswith("_"):
      if label.startswith(known) and len(label) > len(known):
        return True
    elif label == known:
      return True
  return False


def check_k8s_sd(job):
  """Errors of a scrape config's kubernetes_sd_configs blocks."""
  errors = []
  name = job.get("job_name", "?")
  roles = set()
  for sd in job.get("kubernetes_sd_configs") or []:
    unknown = set(sd) - K8S_SD_FIELDS
    if unknown:
      errors.append(f"{name}: unknown kubernetes_sd_configs field(s) "
                    f"{sorted(unknown)}")
    role = sd.get("role")
    if role not in K8S_ROLES:
      errors.append(f"{name}: kubernetes_sd_configs role {role!r} is not one "
                    f"of {sorted(K8S_ROLES)}")
    else:
      roles.add(role)
    namespaces = sd.get("namespaces") or {}
    if set(namespaces) - {"names", "own_namespace"}:
      errors.append(f"{name}: unknown namespaces field(s) "
                    f"{sorted(set(namespaces) - {'names', 'own_namespace'})}")
  for relabel in job.get("relabel_configs") or []:
    for label in relabel.get("source_labels") or []:
      if not label.startswith("__meta_kubernetes_"):
        continue
      if not any(meta_label_known(label, role) for role in roles):
        errors.append(f"{name}: relabelling reads {label}, which role(s) "
                      f"{sorted(roles)} do not provide")
  return errors


def run(cmd):
  print("+", " ".join(cmd), flush=True)
  return subprocess.run(cmd).returncode == 0


def check(promtool):
  ok = True
  config_path = os.path.join(HERE, "prometheus.yml")
  with open(config_path) as f:
    config = yaml.safe_load(f)
  with tempfile.TemporaryDirectory(prefix="plrank-promcheck-") as tmp:
    targets = os.path.join(tmp, "targets.json")
    with open(targets, "w") as f:
      f.write("[]\n")
    for job in config.get("scrape_configs") or []:
      if "kubernetes_sd_configs" not in job:
        continue
      errors = check_k8s_sd(job)
      for error in errors:
        print("FAIL:", error)
      ok = ok and not errors
      del job["kubernetes_sd_configs"]
      job.setdefault("file_sd_configs", []).append({"files": [targets]})
      print(f"kubernetes_sd_configs of job {job.get('job_name')}: "
            f"{'ok' if not errors else 'FAILED'} (checked here; promtool "
            "sees it as file_sd_configs)")
    # rule_files are relative to the configuration file.
    config["rule_files"] = [os.path.join(HERE, p)
                            for p in config.get("rule_files") or []]
    rewritten = os.path.join(tmp, "prometheus.yml")
    with open(rewritten, "w") as f:
      yaml.safe_dump(config, f, sort_keys=False)
    ok = run([promtool, "check", "config", rewritten]) and ok
  rules = sorted(glob.glob(os.path.join(HERE, "rules", "*.yml")))
  if not rules:
    print("FAIL: no rules/*.yml")
    return False
  ok = run([promtool, "check", "rules"] + rules) and ok
  return ok


def test(promtool):
  tests = sorted(glob.glob(os.path.join(HERE, "tests", "*.yml")))
  if not tests:
    print("FAIL: no tests/*.yml")
    return False
  return run([promtool, "test", "rules"] + tests)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("mode", choices=["check", "test"])
  parser.add_argument("--promtool", default="promtool")
  args = parser.parse_args()
  try:
    ok = check(args.promtool) if args.mode == "check" else test(args.promtool)
  except FileNotFoundError as e:
    print(f"FAIL: {e} (Debian package `prometheus` provides promtool)")
    ok = False
  print("PASS" if ok else "FAIL")
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
