#!/usr/bin/env bash
# Runs the tour and every notebook on mx.gpu(0) and prints a one-screen report.
# For anyone with an NVIDIA GPU from Maxwell to Ada (sm_50-sm_89) and its driver:
#   bash tools/gpu-check.sh
# It installs the GPU build into .venv (make setup MXNET=gpu) and sets MXLEARN_DEVICE=gpu, so
# that nothing quietly falls back to the CPU: a run that cannot use the GPU fails and says why.
set -uo pipefail
cd "$(dirname "$0")/.."

# MXNET_BUILD=cpu MXLEARN_DEVICE=cpu runs the same steps on the CPU (to check this script).
BUILD=${MXNET_BUILD:-gpu}
export MXLEARN_DEVICE=${MXLEARN_DEVICE:-gpu}
make setup MXNET="$BUILD" >/dev/null || { echo "gpu-check: make setup MXNET=$BUILD failed"; exit 1; }
PY=.venv/bin/python
# the UCI data beside a checkout (as the Makefile does); elsewhere mxlearn downloads it once
if [ -z "${MXLEARN_DATA:-}" ] && [ -d ../shared/data/letter-recognition ]; then
    export MXLEARN_DATA=$(cd ../shared/data/letter-recognition && pwd)
fi
OUT=runs/gpu-check
mkdir -p "$OUT"

echo "== mxlearn GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
$PY -m mxlearn doctor | grep -E '^(python|mxnet|gpu|  mxnet kernels|device)' || true
$PY - <<'PY' || { echo "gpu-check: MXNet cannot use the GPU (reason above)"; exit 1; }
import mxlearn
from mxlearn import mx
ctx = mxlearn.auto_context()
x = mx.nd.ones((1024, 1024), ctx=ctx)
print("kernel test: %.0f (expected 1048576)" % mx.nd.sum(mx.nd.dot(x, x) / 1024).asscalar())
PY

status=0
run() {  # name, command...: one line per step, with its time
    local name=$1; shift
    local started=$SECONDS
    if "$@" >"$OUT/$name.log" 2>&1; then
        printf '  %-34s ok     %4ds\n' "$name" $((SECONDS - started))
    else
        printf '  %-34s FAILED %4ds  (see %s)\n' "$name" $((SECONDS - started)) "$OUT/$name.log"
        status=1
    fi
}
echo "== runs with MXLEARN_DEVICE=$MXLEARN_DEVICE"
run tour $PY -m mxlearn tour --out "$OUT/tour"
# the notebooks run in a copy: the files they write stay out of notebooks/
rm -rf "$OUT/notebooks" && cp -r notebooks "$OUT/notebooks"
for nb in "$OUT"/notebooks/*.ipynb "$OUT"/notebooks/*/*.ipynb; do
    [ -e "$nb" ] || continue
    name=$(echo "${nb#"$OUT"/notebooks/}" | tr / _)
    run "$name" .venv/bin/jupyter nbconvert --to notebook --execute --inplace "$nb" \
        --ExecutePreprocessor.timeout=900
done
echo "== $( [ $status -eq 0 ] && echo "all passed ($MXLEARN_DEVICE)" || echo 'some runs FAILED' ); logs and executed notebooks in $OUT/"
exit $status
