#!/usr/bin/env python3
# Groups `perf report --no-children --sort dso,symbol` of a plrank-train run by
# training phase (see bench/results/training-profile.md).
#   usage: training_profile_phases.py PERF_DATA [FREQUENCY]
# Prints | phase | share | CPU s |, CPU seconds = samples / FREQUENCY (the
# `perf record -F` rate, default 499).
import sys,re,subprocess
freq=float(sys.argv[2]) if len(sys.argv)>2 else 499.0
out=subprocess.run(["perf","report","-i",sys.argv[1],"--no-children","-n","--sort","dso,symbol","--stdio"],capture_output=True,text=True).stdout
ph={}
def cls(dso,sym):
    if 'libgomp' in dso: return 'OpenMP runtime (spin/barrier)'
    if re.search(r'BuildGroup|BuildRows|AccumulateRows|::Rows\b',sym): return 'histogram, row kernel'
    if re.search(r'AccumulateColumn|BuildColumns|ColumnBlock|FoldCopies|::Fold\b',sym): return 'histogram, column kernel (root)'
    if 'ScanFeature' in sym or 'SubtractFeature' in sym or 'BuildAndScan' in sym or 'KeepBest' in sym: return 'split finding + subtraction + gather'
    if 'Partition' in sym: return 'partition'
    if re.search(r'Parse|AddEntry|Assemble|BinMapper|FromMappers|Digest|Hasher|LineChunk|Cache|Binned',sym): return 'loading/binning'
    if re.search(r'PlackettLuce|PrepareQuery|QueryDeriv|QueryLoss|exp|log|LeafSums|pl_internal|Tied',sym): return 'objective'
    if 'kernel' in dso: return 'kernel'
    return 'other'
n={}
for line in out.splitlines():
    m=re.match(r'\s+([\d.]+)%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*)',line)
    if not m: continue
    c=cls(m.group(3),m.group(4)); ph[c]=ph.get(c,0)+float(m.group(1)); n[c]=n.get(c,0)+int(m.group(2))
for k,v in sorted(ph.items(),key=lambda x:-x[1]): print(f"| {k} | {v:.1f}% | {n[k]/freq:.1f} |")
print(f"| total | | {sum(n.values())/freq:.1f} |")
