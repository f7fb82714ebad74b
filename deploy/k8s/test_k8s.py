#!/usr/bin/python3
"""Offline checks of deploy/k8s (ctest deploy_k8s_*). Subcommands:

  npm_ci    --install_dir=D                  npm ci of validate/ into D (skipped
                                             when D already has this lock file)
  validate  --install_dir=D --out_dir=O      kubectl kustomize base, dev, prod;
                                             the node validator must accept every
                                             object; cross-object consistency and
                                             per-overlay expectations hold (and
                                             mutated renders must fail them)
  rejects   --install_dir=D --out_dir=O      the validator must reject each
                                             validate/testdata/*.yaml with every
                                             `# expect:` message, and accept the
                                             rendered overlays
  commands  --bin_dir=B --out_dir=O          the rendered server args + ConfigMap
                                             run the real plrank-server, and the
                                             trainer Job's command runs the real
                                             plrank-publish/plrank-train
`kubectl` is whichever is on PATH (--kubectl to override).
"""

import argparse
import copy
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.normpath(os.path.join(HERE, "..", ".."))
TARGETS = {"base": "base", "dev": "overlays/dev", "prod": "overlays/prod"}


# ------------------------------------------------------------------ helpers
def render(kubectl, target, out_dir):
    """Renders one kustomization; returns (path of the YAML, objects)."""
    result = subprocess.run([kubectl, "kustomize", os.path.join(HERE, TARGETS[target])],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"FAIL: kubectl kustomize {TARGETS[target]}: {result.stderr}")
    path = os.path.join(out_dir, f"rendered-{target}.yaml")
    with open(path, "w") as f:
        f.write(result.stdout)
    return path, [d for d in yaml.safe_load_all(result.stdout) if d]


def run_validator(install_dir, files):
    result = subprocess.run(["node", os.path.join(HERE, "validate", "validate.mjs"),
                             f"--install_dir={install_dir}", *files],
                            capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def find(objects, kind, name=None):
    found = [o for o in objects if o["kind"] == kind and
             (name is None or o["metadata"]["name"] == name)]
    return found[0] if found else None


def pod_templates(objects):
    """(label, pod template) of every workload."""
    for o in objects:
        label = f"{o['kind']}/{o['metadata']['name']}"
        if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield label, o["spec"]["template"]
        elif o["kind"] == "CronJob":
            yield label, o["spec"]["jobTemplate"]["spec"]["template"]
        elif o["kind"] == "MPIJob":
            for role, replica in sorted(o["spec"]["mpiReplicaSpecs"].items()):
                yield f"{label}/{role}", replica["template"]


def flag_values(args):
    values = {}
    for arg in args:
        if arg == "--":
            break
        match = re.fullmatch(r"--([\w]+)=(.*)", arg)
        if match:
            values[match.group(1)] = match.group(2)
    return values


def unshard_launcher(mpijob):
    """The MPIJob's launcher with --train naming one whole file."""
    args = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"] \
        ["containers"][0]["args"]
    args[:] = ["--train=/data/train.txt" if a.startswith("--train=") else a
               for a in args]


def dockerfile_uid():
    text = open(os.path.join(SOURCE_DIR, "deploy", "docker", "Dockerfile")).read()
    users = re.findall(r"^USER\s+(\d+)", text, re.M)
    return int(users[-1]) if users else None


def selector_matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# -------------------------------------------------------------- consistency
def consistency_errors(objects, target):
    """Cross-object checks a schema cannot express."""
    errors = []
    def need(condition, message):
        if not condition:
            errors.append(message)

    deployment = find(objects, "Deployment", "plrank-server")
    service = find(objects, "Service", "plrank-server")
    if not deployment or not service:
        return ["no Deployment/Service plrank-server"]
    pod = deployment["spec"]["template"]
    server = next((c for c in pod["spec"]["containers"] if c["name"] == "server"), None)
    if not server:
        return ["Deployment/plrank-server has no container `server`"]
    flags = flag_values(server.get("args", []))
    ports = {p["name"]: p["containerPort"] for p in server.get("ports", [])}
    need(ports.get("grpc") == int(flags.get("port", 8500)),
         "container port grpc != --port")
    need(ports.get("metrics") == int(flags.get("metrics_port", 9400)),
         "container port metrics != --metrics_port")
    # The server listens on 127.0.0.1 unless told otherwise: the Service
    # and Prometheus reach the pod IP.
    need(flags.get("host") in ("0.0.0.0", "::"),
         "--host must be 0.0.0.0 (the server defaults to loopback)")
    need(flags.get("metrics_host") in ("0.0.0.0", "::"),
         "--metrics_host must be 0.0.0.0 for Prometheus (the server defaults to loopback)")

    # Graceful termination covers the server's lame duck + drain.
    budget = float(flags.get("lame_duck_seconds", 0)) + float(flags.get("drain_seconds", 10))
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    need(grace > budget, f"terminationGracePeriodSeconds {grace} <= lame_duck + drain {budget}")

    # gRPC probes on the grpc port, health service names the server knows.
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = server.get(probe_name)
        need(probe and "grpc" in probe, f"{probe_name} is not a gRPC probe")
        if probe and "grpc" in probe:
            need(probe["grpc"].get("port") == ports.get("grpc"), f"{probe_name} port != grpc port")
            service_name = probe["grpc"].get("service", "")
            need(service_name in ("", "plrank.v1.Ranker", "plrank.liveness") or
                 service_name.startswith("plrank.v1.Ranker/"),
                 f"{probe_name}: unknown health service {service_name!r}")

    liveness = (server.get("livenessProbe") or {}).get("grpc", {})
    need(liveness.get("service") == "plrank.liveness",
         "livenessProbe must use plrank.liveness (SERVING without a model)")

    # Model volume read-only from the PVC, config from the ConfigMap.
    volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    mounts = {m["mountPath"]: m for m in server.get("volumeMounts", [])}
    model_mount = mounts.get(flags.get("model_base_path", ""))
    need(model_mount and model_mount.get("readOnly") is True,
         "--model_base_path is not a read-only volume mount")
    if model_mount:
        claim = volumes[model_mount["name"]].get("persistentVolumeClaim", {})
        pvc = find(objects, "PersistentVolumeClaim", claim.get("claimName"))
        need(pvc is not None, "model volume is not a PVC of this kustomization")
        need(pvc and "ReadWriteMany" in pvc["spec"]["accessModes"], "model PVC is not ReadWriteMany")
        need(claim.get("readOnly") is True, "server's model PVC volume is not readOnly")
    tmp_mount = mounts.get("/tmp")
    need(tmp_mount and "emptyDir" in volumes.get(tmp_mount["name"], {}), "/tmp is not an emptyDir")
    config_file = flags.get("model_config_file")
    need(config_file, "no --model_config_file")
    if config_file:
        directory, key = os.path.split(config_file)
        mount = mounts.get(directory)
        need(mount and not mount.get("subPath"), "--model_config_file's directory is not a "
             "ConfigMap directory mount (subPath mounts never update)")
        if mount:
            config_map = find(objects, "ConfigMap",
                              volumes[mount["name"]].get("configMap", {}).get("name"))
            need(config_map and key in config_map.get("data", {}),
                 f"ConfigMap has no key {key} for --model_config_file")

    # Every workload: hardened, references resolve, runs as the image's user.
    uid = dockerfile_uid()
    for label, template in pod_templates(objects):
        spec = template["spec"]
        security = spec.get("securityContext", {})
        need(security.get("runAsNonRoot") is True, f"{label}: runAsNonRoot")
        need(security.get("seccompProfile", {}).get("type") == "RuntimeDefault",
             f"{label}: seccompProfile RuntimeDefault")
        need(security.get("runAsUser") == uid, f"{label}: runAsUser != Dockerfile USER {uid}")
        pod_volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for container in spec["containers"]:
            where = f"{label} container {container['name']}"
            context = container.get("securityContext", {})
            need(context.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
            need(context.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation")
            need(context.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: drop ALL")
            need("resources" in container and "requests" in container["resources"],
                 f"{where}: resources.requests")
            for mount in container.get("volumeMounts", []):
                need(mount["name"] in pod_volumes, f"{where}: mount of unknown volume {mount['name']}")
        for volume in pod_volumes.values():
            if "persistentVolumeClaim" in volume:
                need(find(objects, "PersistentVolumeClaim",
                          volume["persistentVolumeClaim"]["claimName"]),
                     f"{label}: PVC {volume['persistentVolumeClaim']['claimName']} not defined")
            if "configMap" in volume:
                need(find(objects, "ConfigMap", volume["configMap"]["name"]),
                     f"{label}: ConfigMap {volume['configMap']['name']} not defined")
        account = spec.get("serviceAccountName")
        need(account is None or find(objects, "ServiceAccount", account),
             f"{label}: ServiceAccount {account} not defined")

    # Trainers publish into the server's model PVC with plrank-publish.
    for kind in ("Job", "CronJob"):
        trainer = find(objects, kind, "plrank-train")
        need(trainer, f"no {kind}/plrank-train")
        if not trainer:
            continue
        spec = (trainer["spec"]["template"] if kind == "Job"
                else trainer["spec"]["jobTemplate"]["spec"]["template"])["spec"]
        container = spec["containers"][0]
        need(container.get("command", [""])[0].endswith("plrank-publish"),
             f"{kind}/plrank-train does not run plrank-publish")
        base_path = flag_values(container.get("args", [])).get("base_path")
        mount = next((m for m in container.get("volumeMounts", [])
                      if m["mountPath"] == base_path), None)
        need(mount and not mount.get("readOnly"), f"{kind}/plrank-train: --base_path not a writable mount")
        if mount and model_mount:
            trainer_claim = {v["name"]: v for v in spec["volumes"]}[mount["name"]] \
                .get("persistentVolumeClaim", {}).get("claimName")
            server_claim = volumes[model_mount["name"]]["persistentVolumeClaim"]["claimName"]
            need(trainer_claim == server_claim, f"{kind}/plrank-train writes another PVC")
        need(spec.get("restartPolicy") in ("Never", "OnFailure"), f"{kind}: restartPolicy")
    # The distributed trainer (prod only): the launcher publishes with
    # plrank-publish --launcher='mpirun -np N', N = workers x slots, and every
    # pod mounts the server's model PVC where plrank-publish writes (rank 0,
    # on a worker, writes the model into plrank-publish's hidden directory).
    mpijob = find(objects, "MPIJob", "plrank-train-mpi")
    need((mpijob is not None) == (target == "prod"),
         f"MPIJob/plrank-train-mpi {'missing in' if target == 'prod' else 'outside'} prod")
    if mpijob and model_mount:
        replicas_of = mpijob["spec"]["mpiReplicaSpecs"]
        launcher_spec = replicas_of["Launcher"]["template"]["spec"]
        container = launcher_spec["containers"][0]
        args = container.get("args", [])
        flags = flag_values(args)
        need(container.get("command", [""])[0].endswith("plrank-publish"),
             "MPIJob launcher does not run plrank-publish")
        launcher = flags.get("launcher", "").split()
        workers = replicas_of["Worker"].get("replicas", 1) * \
            mpijob["spec"].get("slotsPerWorker", 1)
        need(launcher[:1] == ["mpirun"] and "-np" in launcher and
             launcher[launcher.index("-np") + 1:][:1] == [str(workers)],
             f"MPIJob launcher is not --launcher='mpirun -np {workers} ...'")
        server_claim = volumes[model_mount["name"]]["persistentVolumeClaim"]["claimName"]
        for role, replica in replicas_of.items():
            spec = replica["template"]["spec"]
            claims = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName")
                      for v in spec.get("volumes", [])}
            mount = next((m for m in spec["containers"][0].get("volumeMounts", [])
                          if m["mountPath"] == flags.get("base_path")), None)
            need(mount and not mount.get("readOnly") and
                 claims.get(mount["name"]) == server_claim,
                 f"MPIJob {role}: --base_path is not the server's model PVC, writable")
            need(replica.get("restartPolicy") in ("Never", "OnFailure"),
                 f"MPIJob {role}: restartPolicy")
        # Sharded and resumable (docs/distributed-sharding.md): each rank
        # reads its own files, rank 0 checkpoints onto the shared model
        # volume, and a retried launcher resumes from there.
        train_args = args[args.index("--") + 1:] if "--" in args else []
        train_flags_of = flag_values(train_args)
        train_flags_of.update({a[2:]: "true" for a in train_args
                               if re.fullmatch(r"--\w+", a)})
        for name in ("train", "valid"):
            need("{rank}" in train_flags_of.get(name, ""),
                 f"MPIJob: --{name} is not sharded ({{rank}} in the path)")
        checkpoints = train_flags_of.get("checkpoint_dir", "")
        need(checkpoints.startswith(flags.get("base_path", "?") + "/"),
             "MPIJob: --checkpoint_dir is not on the shared model volume")
        need("resume" in train_flags_of, "MPIJob: no --resume")
        need(mpijob["spec"].get("runPolicy", {}).get("backoffLimit", 0) > 0,
             "MPIJob: a failed job is never retried (runPolicy.backoffLimit)")
    cron = find(objects, "CronJob", "plrank-train")
    if cron:
        need(cron["spec"].get("concurrencyPolicy") == "Forbid", "CronJob concurrencyPolicy != Forbid")

    # Service, ServiceMonitor, HPA, PDB, NetworkPolicy point at the server.
    pod_labels = pod["metadata"]["labels"]
    need(selector_matches(deployment["spec"]["selector"]["matchLabels"], pod_labels),
         "Deployment selector does not match its pods")
    need(selector_matches(service["spec"]["selector"], pod_labels), "Service selects no server pod")
    for port in service["spec"]["ports"]:
        need(port["targetPort"] in ports or port["targetPort"] in ports.values(),
             f"Service port {port['name']}: targetPort {port['targetPort']} not a container port")
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    need({"grpc", "metrics"} <= service_ports, "Service lacks grpc or metrics port")
    monitor = find(objects, "ServiceMonitor")
    need(monitor and selector_matches(monitor["spec"]["selector"]["matchLabels"],
                                      service["metadata"]["labels"]),
         "ServiceMonitor selects no Service")
    if monitor:
        for endpoint in monitor["spec"]["endpoints"]:
            need(endpoint.get("port") == "metrics", "ServiceMonitor endpoint is not the metrics port")
    need(find(objects, "PrometheusRule") is not None, "no PrometheusRule")
    hpa = find(objects, "HorizontalPodAutoscaler")
    need(hpa and hpa["spec"]["scaleTargetRef"]["name"] == "plrank-server" and
         hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment", "HPA does not scale the server")
    pdb = find(objects, "PodDisruptionBudget")
    need(pdb and selector_matches(pdb["spec"]["selector"]["matchLabels"], pod_labels),
         "PDB selects no server pod")
    need(pdb and ("minAvailable" in pdb["spec"]) != ("maxUnavailable" in pdb["spec"]),
         "PDB must set exactly one of minAvailable / maxUnavailable")
    policy = find(objects, "NetworkPolicy")
    need(policy and selector_matches(policy["spec"]["podSelector"]["matchLabels"], pod_labels),
         "NetworkPolicy selects no server pod")
    if policy:
        allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule.get("ports", [])}
        need(allowed == {ports.get("grpc"), ports.get("metrics")},
             f"NetworkPolicy ports {allowed} != grpc + metrics")

    # Per-overlay expectations.
    replicas = deployment["spec"].get("replicas")
    images = {c["image"] for _, t in pod_templates(objects) for c in t["spec"]["containers"]}
    need(len(images) == 1, f"server and trainer images differ: {images}")
    if target != "base":
        namespace = find(objects, "Namespace")
        need(namespace is not None, "overlay defines no Namespace")
        for o in objects:
            if o["kind"] != "Namespace":
                need(namespace and o["metadata"].get("namespace") == namespace["metadata"]["name"],
                     f"{o['kind']}/{o['metadata']['name']} not in the overlay namespace")
    if target == "dev":
        need(replicas == 1, f"dev replicas {replicas} != 1")
        need(hpa and hpa["spec"].get("minReplicas", 1) <= 1, "dev HPA minReplicas > 1")
        need(pdb and "maxUnavailable" in pdb["spec"], "dev PDB must allow disruption (maxUnavailable)")
    if target == "prod":
        need(replicas == 3, f"prod replicas {replicas} != 3")
        need(hpa and hpa["spec"].get("minReplicas") == 3 and hpa["spec"]["maxReplicas"] == 10,
             "prod HPA not 3..10")
        need(pdb and pdb["spec"].get("minAvailable") == 2, "prod PDB minAvailable != 2")
        for image in images:
            tag = image.rsplit("@", 1)[-1] if "@" in image else image.rpartition(":")[2]
            need(":" in image.split("/")[-1] or "@" in image, f"prod image {image} has no tag")
            need(tag not in ("latest", "dev", ""), f"prod image {image} is not pinned")
        need(cron and cron["spec"].get("schedule") and not cron["spec"].get("suspend"),
             "prod CronJob has no active schedule")
    return errors


def consistency_mutations(objects):
    """(description, mutated objects) that consistency_errors must reject."""
    def mutate(description, change):
        mutated = copy.deepcopy(objects)
        change(mutated)
        return description, mutated
    server_pod = lambda m: find(m, "Deployment", "plrank-server")["spec"]["template"]["spec"]
    server = lambda m: server_pod(m)["containers"][0]
    return [
        mutate("grace period shorter than lame duck + drain",
               lambda m: server_pod(m).__setitem__("terminationGracePeriodSeconds", 20)),
        mutate("writable root filesystem",
               lambda m: server(m)["securityContext"].__setitem__("readOnlyRootFilesystem", False)),
        mutate("readiness probe on the metrics port",
               lambda m: server(m)["readinessProbe"]["grpc"].__setitem__("port", 9400)),
        mutate("model volume writable",
               lambda m: [x.__setitem__("readOnly", False) for x in server(m)["volumeMounts"]
                          if x["mountPath"] == "/models"]),
        mutate("Service selector typo",
               lambda m: find(m, "Service", "plrank-server")["spec"]["selector"]
               .__setitem__("app.kubernetes.io/component", "sever")),
        mutate("trainer runs as root",
               lambda m: find(m, "Job", "plrank-train")["spec"]["template"]["spec"]
               ["securityContext"].__setitem__("runAsUser", 0)),
        mutate("config file not in the ConfigMap",
               lambda m: server(m)["args"].append("--model_config_file=/etc/plrank/other.textproto")),
        mutate("MPIJob workers read the whole training file",
               lambda m: unshard_launcher(find(m, "MPIJob", "plrank-train-mpi"))),
        mutate("MPIJob never retried",
               lambda m: find(m, "MPIJob", "plrank-train-mpi")["spec"]["runPolicy"]
               .__setitem__("backoffLimit", 0)),
        mutate("MPIJob launcher starts fewer ranks than workers",
               lambda m: find(m, "MPIJob", "plrank-train-mpi")["spec"]["mpiReplicaSpecs"]
               ["Worker"].__setitem__("replicas", 8)),
        mutate("MPIJob worker runs as root",
               lambda m: find(m, "MPIJob", "plrank-train-mpi")["spec"]["mpiReplicaSpecs"]
               ["Worker"]["template"]["spec"]["securityContext"].__setitem__("runAsUser", 0)),
        mutate("MPIJob writes another volume",
               lambda m: find(m, "MPIJob", "plrank-train-mpi")["spec"]["mpiReplicaSpecs"]
               ["Worker"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]
               .__setitem__("claimName", "other")),
        mutate("/metrics left on the server's loopback default",
               lambda m: server(m).__setitem__(
                   "args", [a for a in server(m)["args"] if not a.startswith("--metrics_host=")])),
    ]


# ------------------------------------------------------------- subcommands
def npm_ci(args):
    os.makedirs(args.install_dir, exist_ok=True)
    lock = os.path.join(HERE, "validate", "package-lock.json")
    digest = hashlib.sha256(open(lock, "rb").read() +
                            open(os.path.join(HERE, "validate", "package.json"), "rb").read()).hexdigest()
    stamp = os.path.join(args.install_dir, "node_modules", ".plrank-lock-sha256")
    models = os.path.join(args.install_dir, "node_modules", "@kubernetes", "client-node",
                          "dist", "gen", "models", "V1Deployment.js")
    if os.path.exists(stamp) and open(stamp).read() == digest and os.path.exists(models):
        print(f"OK: {args.install_dir} already has this package-lock.json installed")
        return 0
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(os.path.join(HERE, "validate", name), os.path.join(args.install_dir, name))
    result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                            cwd=args.install_dir, check=False)
    if result.returncode != 0 or not os.path.exists(models):
        print("FAIL: npm ci")
        return 1
    with open(stamp, "w") as f:
        f.write(digest)
    print(f"OK: installed the validator's packages into {args.install_dir}")
    return 0


def validate(args):
    failures = 0
    for target in TARGETS:
        path, objects = render(args.kubectl, target, args.out_dir)
        code, output = run_validator(args.install_dir, [path])
        if code != 0:
            print(output)
            print(f"FAIL: validator rejected {TARGETS[target]}")
            failures += 1
        else:
            print(f"OK: schema: {TARGETS[target]}: {output.strip().splitlines()[-1]}")
        errors = consistency_errors(objects, target)
        for error in errors:
            print(f"FAIL: {TARGETS[target]}: {error}")
        failures += len(errors)
        if not errors:
            print(f"OK: consistency: {TARGETS[target]} ({len(objects)} objects)")
        if target == "prod":
            for description, mutated in consistency_mutations(objects):
                found = consistency_errors(mutated, target)
                if found:
                    print(f"OK: mutation rejected: {description}: {found[0]}")
                else:
                    print(f"FAIL: mutation accepted: {description}")
                    failures += 1
    print("PASSED" if failures == 0 else f"FAILED: {failures} problem(s)")
    return 1 if failures else 0


def rejects(args):
    failures = 0
    testdata = os.path.join(HERE, "validate", "testdata")
    fixtures = sorted(f for f in os.listdir(testdata) if f.endswith(".yaml"))
    if len(fixtures) < 4:
        print(f"FAIL: only {len(fixtures)} fixtures in {testdata}")
        return 1
    for fixture in fixtures:
        path = os.path.join(testdata, fixture)
        expected = re.findall(r"^# expect: (.+)$", open(path).read(), re.M)
        code, output = run_validator(args.install_dir, [path])
        problems = []
        if not expected:
            problems.append("fixture has no `# expect:` line")
        if code != 1:
            problems.append(f"validator exit status {code}, expected 1 (rejected)")
        for message in expected:
            if f"{path}: {message}" not in output:
                problems.append(f"missing message: {message}")
        reported = len([l for l in output.splitlines() if l.startswith(path + ": ")])
        if reported != len(expected):
            problems.append(f"{reported} messages, expected {len(expected)}")
        if problems:
            print(output)
            for problem in problems:
                print(f"FAIL: {fixture}: {problem}")
            failures += 1
        else:
            print(f"OK: rejected {fixture} ({len(expected)} message(s))")
    rendered = [render(args.kubectl, target, args.out_dir)[0] for target in TARGETS]
    code, output = run_validator(args.install_dir, rendered)
    if code != 0:
        print(output)
        print("FAIL: validator rejected the rendered manifests")
        failures += 1
    else:
        print(f"OK: accepted the rendered base, dev and prod: {output.strip().splitlines()[-1]}")
    print("PASSED" if failures == 0 else f"FAILED: {failures} problem(s)")
    return 1 if failures else 0


def commands(args):
    """The rendered commands run with the real binaries."""
    failures = 0
    bin_dir = os.path.abspath(args.bin_dir)
    _, objects = render(args.kubectl, "prod", args.out_dir)
    work = tempfile.mkdtemp(prefix="plrank-k8s-commands-", dir=args.out_dir)
    try:
        models, data = os.path.join(work, "models"), os.path.join(work, "data")
        os.makedirs(models)
        os.makedirs(data)
        subprocess.run([os.path.join(bin_dir, "plrank-datagen"), "--queries=40", "--features=12",
                        "--mean_docs=15", f"--out_prefix={data}/d"], check=True, capture_output=True)
        for split, name in (("train", "train.txt"), ("vali", "vali.txt"), ("test", "test.txt")):
            os.rename(f"{data}/d.{split}", f"{data}/{name}")
        rewrite = lambda arg: arg.replace("=/models", f"={models}").replace("=/data/", f"={data}/")

        # The trainer Job's exact arguments (paths mapped to the work dir).
        job = find(objects, "Job", "plrank-train")
        container = job["spec"]["template"]["spec"]["containers"][0]
        publish = os.path.join(SOURCE_DIR, "deploy", "docker",
                               os.path.basename(container["command"][0]))
        job_args = [rewrite(a) for a in container["args"]]
        job_args.insert(job_args.index("--"), f"--bin_dir={bin_dir}")
        published = []
        for attempt in range(2):
            version = str(1 + attempt)
            result = subprocess.run([publish, *job_args[:job_args.index("--")],
                                     f"--version={version}", *job_args[job_args.index("--"):]],
                                    capture_output=True, text=True, timeout=120, check=False)
            if result.returncode != 0:
                print(result.stderr)
                print(f"FAIL: the trainer Job's command failed (version {version})")
                failures += 1
            else:
                published.append(version)
                print(f"OK: trainer Job command published {result.stdout.strip()}")

        # The server Deployment's exact arguments + the ConfigMap.
        config_map = find(objects, "ConfigMap", "plrank-server-config")
        server = find(objects, "Deployment", "plrank-server")["spec"]["template"]["spec"]["containers"][0]
        flags = flag_values(server["args"])
        config_path = os.path.join(work, os.path.basename(flags["model_config_file"]))
        with open(config_path, "w") as f:
            f.write(config_map["data"][os.path.basename(flags["model_config_file"])])
        overrides = [f"--model_base_path={models}", f"--model_config_file={config_path}",
                     "--host=127.0.0.1", "--port=0", "--metrics_host=127.0.0.1",
                     "--metrics_port=0",
                     "--lame_duck_seconds=0", "--drain_seconds=1"]
        out_path, err_path = os.path.join(work, "server.out"), os.path.join(work, "server.err")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            process = subprocess.Popen([os.path.join(bin_dir, "plrank-server"), *server["args"],
                                        *overrides], stdout=out, stderr=err)
        try:
            target = None
            deadline = time.time() + 15
            while time.time() < deadline and process.poll() is None and not target:
                match = re.search(r"listening on (\S+:\d+)", open(out_path).read())
                target = match.group(1) if match else None
                time.sleep(0.05)
            if not target:
                print(open(err_path).read())
                print("FAIL: plrank-server did not start with the Deployment's args and ConfigMap")
                failures += 1
            else:
                print(f"OK: plrank-server accepted the Deployment's args and ConfigMap ({target})")
                client = os.path.join(bin_dir, "plrank-client")
                status = ""
                deadline = time.time() + 15
                while time.time() < deadline:
                    status = subprocess.run([client, f"--target={target}", "--model=web",
                                             "--deadline_seconds=5", "status"],
                                            capture_output=True, text=True, check=False).stdout
                    if all(re.search(rf"version {v}\s+AVAILABLE", status) for v in published):
                        break
                    time.sleep(0.1)
                ok = published and all(re.search(rf"version {v}\s+AVAILABLE", status)
                                       for v in published)
                if not ok:
                    print(status)
                    print("FAIL: the published versions are not AVAILABLE")
                    failures += 1
                else:
                    print(f"OK: versions {', '.join(published)} AVAILABLE")
                for label in re.findall(r'key: "(\w+)"', config_map["data"][os.path.basename(
                        flags["model_config_file"])]):
                    result = subprocess.run([client, f"--target={target}", "--model=web",
                                             f"--label={label}", f"--data={data}/test.txt",
                                             "--deadline_seconds=5", "rank"],
                                            capture_output=True, text=True, check=False)
                    if result.returncode != 0:
                        print(result.stdout + result.stderr)
                        print(f"FAIL: rank with --label={label}")
                        failures += 1
                    else:
                        print(f"OK: rank with version label {label}")
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        log = open(err_path).read()
        if "config_reload_failed" in log or "version_load_failed" in log:
            print(log)
            print("FAIL: server logged a config or load failure")
            failures += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASSED" if failures == 0 else f"FAILED: {failures} problem(s)")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["npm_ci", "validate", "rejects", "commands"])
    parser.add_argument("--install_dir")
    parser.add_argument("--out_dir")
    parser.add_argument("--bin_dir")
    parser.add_argument("--kubectl", default="kubectl")
    args = parser.parse_args()
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    if args.command != "commands" and not args.install_dir:
        parser.error("--install_dir is required")
    if args.command != "npm_ci" and not args.out_dir:
        parser.error("--out_dir is required")
    if args.command == "commands" and not args.bin_dir:
        parser.error("--bin_dir is required")
    return {"npm_ci": npm_ci, "validate": validate, "rejects": rejects,
            "commands": commands}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
