#!/bin/sh
# Key generation benchmark: rudder's Sprig key functions vs the Go oracle (Helm v4.3.1's
# function map, real Sprig on Go's crypto) in one run, side by side. Each case is one
# template that makes K keys (genPrivateKey of each type; genCA, genSelfSignedCert and
# genSignedCert, whose keys are RSA 2048) and prints "ok" per well-formed PEM, so that both
# outputs can be compared. Each side runs the case N+1 times in one process (the oracle's
# -bench mode and bench_template: one warm-up render) under /usr/bin/time; the figure is the
# process's CPU time (user + system) per key. Prime search time varies from key to key, so
# use enough keys. No thresholds: figures only.
# Usage: bench/template/keys.sh [N [CASE...]]   (renders per case after the warm-up, default 3;
# cases by name prefix, default all)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-3}
[ $# -gt 0 ] && shift
only=${*:-}
out=${BENCH_OUT:-$root/build-bench}
mkdir -p "$out"
oracle=$("$root/tests/oracle/template/build.sh")
bench=$("$here/build.sh")
# name, keys per render, the loop's body ($c holds what was made), the PEM line expected
cases='rsa4096_genPrivateKey|4|{{ $c := genPrivateKey "rsa" }}{{ if hasPrefix "-----BEGIN RSA PRIVATE KEY" $c }}ok{{ end }}
rsa2048_genCA|12|{{ $c := genCA "ca" 365 }}{{ if hasPrefix "-----BEGIN RSA PRIVATE KEY" $c.Key }}ok{{ end }}
rsa2048_genSelfSignedCert|12|{{ $c := genSelfSignedCert "x" nil (list "a.example") 365 }}{{ if hasPrefix "-----BEGIN CERTIFICATE" $c.Cert }}ok{{ end }}
rsa2048_genSignedCert|12|{{ $c := genSignedCert "x" nil nil 365 $ca }}{{ if hasPrefix "-----BEGIN RSA PRIVATE KEY" $c.Key }}ok{{ end }}
ecdsa_genPrivateKey|5000|{{ $c := genPrivateKey "ecdsa" }}{{ if hasPrefix "-----BEGIN EC PRIVATE KEY" $c }}ok{{ end }}
ed25519_genPrivateKey|5000|{{ $c := genPrivateKey "ed25519" }}{{ if hasPrefix "-----BEGIN PRIVATE KEY" $c }}ok{{ end }}'
cpu() { # command... -> "user+sys seconds" on stdout, the command's output in $out/cpu.out
  /usr/bin/time -f "%U %S" -o "$out/cpu.time" "$@" > "$out/cpu.out"
  awk '{ printf "%.3f", $1 + $2 }' "$out/cpu.time"
}
printf '%-28s %6s %16s %16s %9s %s\n' case keys "Go ms/key" "rudder ms/key" Go/rudder same-output
echo "$cases" | while IFS='|' read -r name k body; do
  if [ -n "$only" ]; then
    pick=no
    for o in $only; do case $name in "$o"*) pick=yes ;; esac; done
    [ $pick = yes ] || continue
  fi
  set=$out/keys_$name.tcase
  {
    echo "=== $name"
    echo "--- values"
    echo "{\"n\": $k}"
    echo "--- template t/k.yaml"
    case $name in
      *genSignedCert) echo "{{ \$ca := genCA \"ca\" 365 }}{{ range until (int .n) }}$body" ;;
      *) echo "{{ range until (int .n) }}$body" ;;
    esac
    echo "{{ end }}"
  } > "$set"
  "$oracle" "$set" > "$out/set.jsonl"
  keys=$(( (k + 0) * (n + 1) ))
  case $name in *genSignedCert) keys=$(( (k + 1) * (n + 1) )) ;; esac
  go_s=$(cpu "$oracle" -bench "$n" "$set"); go_fnv=$(sed 's/.*fnv=//' "$out/cpu.out")
  c_s=$(cpu "$bench" "$n" "$out/set.jsonl"); c_fnv=$(sed 's/.*fnv=//' "$out/cpu.out")
  awk -v name="$name" -v keys="$keys" -v g="$go_s" -v c="$c_s" -v same="$([ "$go_fnv" = "$c_fnv" ] && echo yes || echo NO)" \
    'BEGIN { printf "%-28s %6d %16.3f %16.3f %8.1fx %s\n", name, keys, g * 1e3 / keys, c * 1e3 / keys, g / c, same }'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
