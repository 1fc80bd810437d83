#!/bin/bash
# device batches for this session (not committed)
set -u
export MAGPIE=$PWD/.klibs/magpie
export PATH=$PATH:/usr/local/cuda/bin
R=/tmp/res; rm -rf $R; mkdir -p $R
s0=$(date +%s)
ph() { echo "[$(($(date +%s) - s0)) s] $*" | tee -a $OUT/phases.txt; }
nvidia-smi >$OUT/smi.txt 2>&1
pack() { tar czf $OUT/$1.tgz -C $R $1 $1.out 2>/dev/null; }
H200=1; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || H200=0
fid() {
    TR=${1:-.gpudata/mixtral*.gz}; NM=${2:-fid}
    if [ $H200 = 0 ]; then
        ph capture; mkdir -p /tmp/tr; timeout 150 python3 .gpudata/make_traces.py --out /tmp/tr --which moe >$R/capture.out 2>&1; ph "capture rc=$?"; TR="/tmp/tr/*.json.gz"; cp $R/capture.out $OUT/
    fi
    ph $NM; OUT=$R/$NM PER_TRACE_S=${PT:-100} timeout ${FT:-130} bash bench/replay_fidelity.sh $TR >$R/$NM.out 2>&1; ph "$NM rc=$?"; pack $NM
}
case $1 in
A)
    ph calibrate; OUT=$R/calib RUNS=5 timeout ${CT:-190} bash bench/calibrate_gpu.sh >$R/calib.out 2>&1; ph "calibrate rc=$?"; pack calib
    ph suites; OUT=$R/speed MODES=sequential timeout ${ST:-120} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed
    ph profile; OUT=$R/prof timeout ${PRT:-80} bash bench/kernel_profile_gpu.sh >$R/prof.out 2>&1; ph "profile rc=$?"; pack prof
    PT=80 FT=110 fid
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
    ;;
B)
    ph seqerr; OUT=$R/seq N=${N:-10} timeout ${SE:-250} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    PT=90 FT=200 fid ".gpudata/tp2*.gz"
    ph suites-fixed; OUT=$R/speedf MODES=fixed timeout ${SF:-100} bash bench/kernel_eval_speed.sh suites >$R/speedf.out 2>&1; ph "suites-fixed rc=$?"; pack speedf
    ;;
C)
    PT=${PT:-90} FT=${FT:-125} fid
    ph calibrate; OUT=$R/calib RUNS=5 timeout ${CT:-170} bash bench/calibrate_gpu.sh >$R/calib.out 2>&1; ph "calibrate rc=$?"; pack calib
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
;;
D)
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
    if [ $H200 = 1 ]; then ph suites; OUT=$R/speed MODES=sequential timeout ${ST:-120} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed; fi
    ph seqerr; OUT=$R/seq N=${N:-10} timeout ${SE:-250} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    ph suites-fixed; OUT=$R/speedf MODES=fixed timeout ${SF:-100} bash bench/kernel_eval_speed.sh suites >$R/speedf.out 2>&1; ph "suites-fixed rc=$?"; pack speedf
    ;;
E)
    PT=${PT:-90} FT=${FT:-125} fid
    [ $H200 = 1 ] && PT=90 FT=125 fid ".gpudata/tp2*.gz" fid2
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
    ph suites; OUT=$R/speed MODES=sequential timeout ${ST:-120} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed
    [ "${SKIPSEQ:-0}" = 1 ] || { ph seqerr; OUT=$R/seq N=${N:-5} timeout ${SE:-150} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq; }
    ;;
F)
    PT=${PT:-90} FT=${FT:-125} fid
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
    ph seqerr; OUT=$R/seq N=${N:-3} timeout ${SE:-110} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    ;;
G)
    PT=${PT:-90} FT=${FT:-125} fid
    ph speedup1pct-fixed; OUT=$R/sp1 N=0 timeout 60 bash bench/kernel_eval_speed.sh seqerr >$R/sp1.out 2>&1; ph "speedup1pct-fixed rc=$?"; pack sp1
    [ $H200 = 1 ] && PT=80 FT=110 fid ".gpudata/tp2*.gz" fid2
    ph suites; OUT=$R/speed MODES=sequential timeout ${ST:-120} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed
    ;;
H)
    PT=90 FT=120 fid
    [ $H200 = 1 ] && PT=80 FT=105 fid ".gpudata/tp2*.gz" fid2
    ph suites; OUT=$R/speed MODES=sequential timeout ${ST:-120} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed
    ph seqerr; OUT=$R/seq WARM=1 N=${N:-100} timeout ${SE:-200} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    ;;
I)
    ph seqerr; OUT=$R/seq WARM=1 N=${N:-100} timeout ${SE:-400} bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    ph warmcli; RUNS=3 timeout ${WT:-120} bash bench/warm_pool_cli.sh $MAGPIE >$R/warmcli.out 2>&1; ph "warmcli rc=$?"; cp $R/warmcli.out $OUT/
    ;;
J)
    ph capture-llama; mkdir -p /tmp/tl; timeout 90 python3 .gpudata/make_traces.py --out /tmp/tl --which llama >$R/capture.out 2>&1; ph "capture rc=$?"; cp $R/capture.out $OUT/; ls /tmp/tl >>$OUT/phases.txt
    PT=70 FT=85 fid ".gpudata/mixtral*.gz" fid
    PT=70 FT=85 fid ".gpudata/tp2*.gz" fid2
    PT=70 FT=85 fid "/tmp/tl/*.json.gz" fid3
    ph suites; OUT=$R/speed WARM=1 MODES=sequential timeout ${ST:-90} bash bench/kernel_eval_speed.sh suites >$R/speed.out 2>&1; ph "suites rc=$?"; pack speed
    left=$((585 - $(date +%s) + s0)); ph "seqerr ${left}s"
    OUT=$R/seq WARM=1 N=${N:-100} timeout $left bash bench/kernel_eval_speed.sh seqerr >$R/seq.out 2>&1; ph "seqerr rc=$?"; pack seq
    ;;
K)
    ph capture-llama; mkdir -p /tmp/tl; timeout 90 python3 .gpudata/make_traces.py --out /tmp/tl --which llama >$R/capture.out 2>&1; ph "capture rc=$?"
    PT=70 FT=85 fid "/tmp/tl/*.json.gz" fid3
    PT=70 FT=85 fid ".gpudata/mixtral*.gz" fid
    PT=70 FT=85 fid ".gpudata/tp2*.gz" fid2
    ph warmcli; RUNS=3 timeout ${WT:-110} bash bench/warm_pool_cli.sh $MAGPIE >$R/warmcli.out 2>&1; ph "warmcli rc=$?"; cp $R/warmcli.out $OUT/
    ;;
L)
    ph capture-llama; mkdir -p /tmp/tl; timeout 60 python3 .gpudata/make_traces.py --out /tmp/tl --which llama >$R/capture.out 2>&1; ph "capture rc=$?"
    ph fid3; OUT=$R/fid3 PER_TRACE_S=60 timeout 75 bash bench/replay_fidelity.sh /tmp/tl/*.json.gz >$R/fid3.out 2>&1; ph "fid3 rc=$?"; pack fid3
    ;;
esac
