#!/usr/bin/env bash
# The reproducers of results/failures.yaml (docs/failures.md), from the
# repository root:
#   docs/repro/run-all.sh build   build machine: the compile-time reproducers
#                                 (ICEs, the abstract class, globalisation in
#                                 the device IR) print their verdicts; the
#                                 programs go to build/repro/ (carry it)
#   docs/repro/run-all.sh run     GPU host: runs build/repro/'s programs
# One line per check: "<id>: REPRODUCED|FIXED|CONTROL OK|NOT REPRODUCED|
# SKIP ...: what was seen". Runtime libraries: GCC 12's are copied into
# build/repro/lib/gcc12; LLVM's come from the toolchain bundles
# (build/clang22-sm90/lib; optionally build/clang19-sm90/lib and
# build/clang16-sm90/lib, as scripts/gpu-run.sh
# unpacks them), else the check says SKIP.
set -u
out=build/repro
mode=${1:-run}
say() { printf '%-32s %s\n' "$1:" "$2"; }

# A command's output has (or lacks) a pattern: the verdict for a compile.
expect_output() { # id pattern verdict-if-found verdict-if-not log cmd...
	local id=$1 pat=$2 yes=$3 no=$4 log=$5
	shift 5
	"$@" >"$log" 2>&1
	if grep -qE "$pat" "$log"; then say "$id" "$yes: $(grep -m1 -oE "$pat.{0,60}" "$log")"; else say "$id" "$no (log $log)"; fi
}

# A tree of the repository at a commit (compile-time reproducers of bugs
# already fixed on this branch).
at() {
	local dir=$out/src-$1
	[ -d "$dir" ] || git worktree add --detach -f "$dir" "$1" >/dev/null 2>&1 || return 1
	echo "$dir"
}

gcc12() { g++-12 -O3 -std=c++17 -fopenmp -foffload=nvptx-none -fcf-protection=none "-foffload-options=nvptx-none=-misa=sm_80 -lm" "$@"; }
llvm22_flags() { echo "-O3 -std=c++17 -fopenmp --offload-arch=sm_90 -I$PWD/.toolchains/llvm22/include -L$PWD/.toolchains/llvm22/lib --libomptarget-nvptx-bc-path=$PWD/.toolchains/llvm22/lib/nvptx64-nvidia-cuda -Xoffload-linker -L$PWD/.toolchains/llvm22/lib/nvptx64-nvidia-cuda -Wno-unknown-cuda-version"; }
llvm16_flags() { local l=$PWD/.toolchains/llvm16/usr/lib/llvm-16; echo "-O3 -std=c++17 -fopenmp --offload-arch=sm_90 -I$l/lib/clang/16/include --libomptarget-nvptx-bc-path=$l/lib -L$l/lib -Wno-unknown-cuda-version"; }

# Builds a program in generic and in CUDA mode and counts the SASS slots of
# its bare kernel (nvdisasm of the device image that -save-temps keeps).
bare_kernel() { # id kernel-name compile-command source binary-name
	local id=$1 kernel=$2 cmd=$3 src=$4 bin=$5 root=$PWD m dir n
	for m in generic cuda; do
		dir=$out/tmp-$bin-$m
		mkdir -p "$dir"
		(cd "$dir" && $cmd $([ $m = cuda ] && echo -fopenmp-cuda-mode) -save-temps "$root/$src" -o "$root/$out/$bin.$m-mode") >$out/logs/$bin-$m.log 2>&1
		n=$(nvdisasm "$dir"/*.img 2>/dev/null | awk -v k="$kernel" '/^[[:space:]]*\.text\./{on = index($0, k) > 0} on && /\/\*[0-9a-f]{4}\*\//{n++} END{print n+0}')
		# 16 slots: LDC, EXIT, a branch to itself and padding (the body gone).
		case $m/$((n > 16)) in
		generic/0) say "$id@$bin-$m" "REPRODUCED: the bare kernel $kernel is emptied ($n SASS slots)" ;;
		generic/1) say "$id@$bin-$m" "NOT REPRODUCED: the bare kernel $kernel keeps $n SASS slots" ;;
		cuda/1) say "$id@$bin-$m" "CONTROL OK: the bare kernel $kernel has $n SASS slots" ;;
		cuda/0) say "$id@$bin-$m" "CONTROL FAILED: the bare kernel $kernel has $n SASS slots" ;;
		esac
		rm -rf "$dir"
	done
}

build() {
	mkdir -p $out/lib/gcc12 $out/logs
	cp -L /usr/lib/x86_64-linux-gnu/libgomp.so.1 /usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1 $out/lib/gcc12/

	# gcc12-firstprivate-lambda-ice: compile only.
	expect_output gcc12-firstprivate-lambda-ice "internal compiler error: in gimplify_adjust_omp_clauses" REPRODUCED "NOT REPRODUCED" \
		$out/logs/fpl.log g++-12 -O2 -fopenmp -foffload=disable -c docs/repro/gcc12-firstprivate-lambda-ice/repro.cpp -o $out/fpl.o

	# gcc12-kkomp-team-ice: the cell at the folder's commit ICEs; at HEAD it builds (run on the GPU).
	if src=$(at 742eb60); then
		expect_output gcc12-kkomp-team-ice@742eb60 "internal compiler error: Segmentation fault" REPRODUCED "NOT REPRODUCED" \
			$out/logs/kkomp-742eb60.log gcc12 -I$src/harness $src/generated/snap_ui/kk-omp-b.cpp -o $out/kkomp-742eb60
	else say gcc12-kkomp-team-ice@742eb60 "SKIP: no git history"; fi
	if gcc12 -Iharness generated/snap_ui/kk-omp-b.cpp -o $out/snap_ui.kk-omp-b.gcc12 >$out/logs/kkomp-head.log 2>&1; then
		say gcc12-kkomp-team-ice@HEAD "FIXED: snap_ui.kk-omp-b builds (run it on the GPU)"
	else say gcc12-kkomp-team-ice@HEAD "NOT FIXED: $(grep -m1 error $out/logs/kkomp-head.log)"; fi

	# snapsystem-abstract: the bundle's commit against the merge that fixed it.
	for c in 1195d01 ec11e41; do
		if src=$(at $c); then
			expect_output snapsystem-abstract@$c "is an abstract class" REPRODUCED "builds (FIXED)" $out/logs/abstract-$c.log \
				clang++-19 -std=c++17 -fopenmp -fsyntax-only -I$src/harness $src/generated/snap_yi/kk-omp-b.cpp
		else say snapsystem-abstract@$c "SKIP: no git history"; fi
	done

	# gcc12-lambda-map: GCC 12 maps the closure bitwise (no attach in its
	# omplower dump); clang 22 is the control.
	gcc12 -fdump-tree-omplower=$out/logs/lambda-map.omplower docs/repro/gcc12-lambda-map/repro.cpp -o $out/lambda-map.gcc12 >$out/logs/lambda-map-gcc12.log 2>&1
	if grep -E "pragma omp target num_teams.*map\(to:\*body" $out/logs/lambda-map.omplower | grep -qv attach; then
		say gcc12-lambda-map@compile "REPRODUCED: the closure is mapped with no attach of its captured pointers"
	else say gcc12-lambda-map@compile "NOT REPRODUCED: see $out/logs/lambda-map.omplower"; fi
	clang++-22 $(llvm22_flags) docs/repro/gcc12-lambda-map/repro.cpp -o $out/lambda-map.clang22 >$out/logs/lambda-map-clang22.log 2>&1

	# ompx-bare-generic-mode: the minimal program and TestSNAP's yi in
	# direct-ompx (the command of `mage build`'s log), each in generic and in
	# CUDA data-sharing mode; the verdict at build time is the size of the
	# bare kernel's machine code after the device link (LDC + EXIT: emptied).
	local cmd
	cmd=$(PM_KERNELS=snap_yi PM_VARIANTS=direct-ompx PM_TOOLCHAINS=clang22-sm90 go run mage.go build >$out/logs/mage-build.log 2>&1 &&
		sed -n '1s/^\$ //p' build/clang22-sm90/snap_yi.direct-ompx.log)
	if [ -n "$cmd" ]; then
		cmd=${cmd% -o *}
		cmd=${cmd/ -fopenmp-cuda-mode/}
		cmd=${cmd//.toolchains/$PWD/.toolchains}
		cmd=${cmd/-Iharness/-I$PWD/harness}
		local line
		line=$(grep -n 'pragma omp target teams ompx_bare' docs/repro/ompx-bare-generic-mode/repro.cpp | cut -d: -f1)
		bare_kernel ompx-bare-generic-mode "main_l$line" "$cmd" docs/repro/ompx-bare-generic-mode/repro.cpp minimal
		bare_kernel ompx-bare-generic-mode snap_yi_kernel "$cmd" generated/snap_yi/direct-ompx.cpp snap_yi.direct-ompx
		bare_kernel ompx-bare-generic-mode "main_l$line" "clang++-19 -O3 -std=c++17 -fopenmp --offload-arch=sm_90 --libomptarget-nvptx-bc-path=/usr/lib/llvm-19/lib -Wno-unknown-cuda-version" \
			docs/repro/ompx-bare-generic-mode/repro.cpp minimal-clang19
	else say ompx-bare-generic-mode "SKIP: mage build failed ($out/logs/mage-build.log)"; fi

	# scratch-rebase-out-of-window: the shifted pointer's device assembly
	# converts DynamicSharedBuffer - ie * 18432 with cvta.shared; -DSLICE
	# (pm::TeamSlice's indexing) converts only addresses inside the buffer.
	# Built inside its folder: the offload linker keeps its temporaries in
	# the working directory.
	local v flags root=$PWD
	flags=$(llvm22_flags)
	for v in shifted slice; do
		mkdir -p $out/rebase-$v
		(cd $out/rebase-$v && clang++-22 $flags $([ $v = slice ] && echo -DSLICE) -save-temps=obj \
			"$root/docs/repro/scratch-rebase-out-of-window/repro.cpp" -o repro) >$out/logs/rebase-$v.log 2>&1 ||
			{ say scratch-rebase-out-of-window@$v "SKIP: clang 22 did not build it ($out/logs/rebase-$v.log)"; continue; }
		if grep -A2 'DynamicSharedBuffer;' $out/rebase-$v/repro-openmp-nvptx64-nvidia-cuda-sm_90.s | grep -A1 -- '-18432' | grep -q cvta.shared; then
			say scratch-rebase-out-of-window@$v "$([ $v = slice ] && echo "NOT FIXED" || echo REPRODUCED): cvta.shared of DynamicSharedBuffer - ie * 18432"
		else say scratch-rebase-out-of-window@$v "$([ $v = slice ] && echo "FIXED" || echo "NOT REPRODUCED"): no cvta.shared of a shifted buffer"; fi
	done

	# gcc-host-fallback-teams: a host program; its verdict is its last line.
	if g++ -O2 -fopenmp -foffload=disable docs/repro/gcc-host-fallback-teams/repro.cpp -o $out/host-fallback-teams >$out/logs/host-fallback-teams.log 2>&1; then
		OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores timeout 120 $out/host-fallback-teams 2000 32 >>$out/logs/host-fallback-teams.log 2>&1
		say gcc-host-fallback-teams "$(tail -1 $out/logs/host-fallback-teams.log)"
	else say gcc-host-fallback-teams "SKIP: g++ did not build it ($out/logs/host-fallback-teams.log)"; fi

	# tune-register-limit: a CUDA program; on the GPU its verdict is its last line.
	if nvcc -O3 -arch=sm_90 -Xptxas -v docs/repro/tune-register-limit/repro.cu -o $out/tune-register-limit >$out/logs/tune-register-limit.log 2>&1; then
		say tune-register-limit "built ($(grep -m1 -oE 'Used [0-9]+ registers' $out/logs/tune-register-limit.log))"
	else say tune-register-limit "SKIP: nvcc did not build it ($out/logs/tune-register-limit.log)"; fi

	# llvm16-narrow-barrier: 4 and 32 threads a team.
	if clang++-16 $(llvm16_flags) docs/repro/llvm16-narrow-barrier/barrier.cpp -o $out/barrier.clang16 >$out/logs/barrier.log 2>&1; then
		say llvm16-narrow-barrier "built (runs on the GPU with build/clang16-sm90/lib)"
	else say llvm16-narrow-barrier "SKIP: clang 16 did not build it ($out/logs/barrier.log)"; fi
	git worktree prune
	for src in $out/src-*; do [ -d "$src" ] && git worktree remove --force "$src"; done
	say build "programs in $out ($(du -sh $out | cut -f1)); carry it to the GPU host"
}

# A program's verdict: verified output, "verified":true records, or a
# failure (exit status, a runtime error, "verified":false, a time-out).
run_prog() { # id expect(pass|fail) libs seconds cmd...
	local id=$1 expect=$2 libs=$3 secs=$4
	shift 4
	if [ ! -x "$1" ]; then say "$id" "SKIP: $1 not built"; return; fi
	if [ ! -d "$libs" ]; then say "$id" "SKIP: no runtime libraries at $libs"; return; fi
	local log=$out/logs/$id.run.log rc
	LD_LIBRARY_PATH=$libs OMP_TARGET_OFFLOAD=MANDATORY timeout "$secs" "$@" >"$log" 2>&1
	rc=$?
	# A program that fell back to the host proves nothing either way.
	if [ $rc -eq 3 ] || grep -q '"device":"host' "$log"; then say "$id" "SKIP: ran on the host, not on a GPU ($log)"; return; fi
	local got=pass
	if [ $rc -ne 0 ] || grep -q '"verified":false\|^wrong' "$log" || ! grep -q '"verified":true\|^verified' "$log"; then got=fail; fi
	local seen
	seen="exit $rc$([ $rc -eq 124 ] && echo ' (timed out)'): $(grep -m1 -oE '(wrong|libgomp|omptarget|Libomptarget|"verified":(true|false)|"error":"[^"]+|^verified)[^"]{0,80}' "$log" | head -1)"
	case $expect/$got in
	fail/fail) say "$id" "REPRODUCED ($seen)" ;;
	pass/pass) say "$id" "CONTROL OK ($seen)" ;;
	fail/pass) say "$id" "NOT REPRODUCED ($seen)" ;;
	pass/fail) say "$id" "CONTROL FAILED ($seen)" ;;
	esac
}

run() {
	mkdir -p $out/logs
	# Without a GPU every offload program fails, which would read as REPRODUCED.
	if ! nvidia-smi -L >/dev/null 2>&1 && [ -z "${REPRO_ANY_DEVICE:-}" ]; then
		say run "SKIP: no NVIDIA GPU (nvidia-smi -L failed)"
		return 1
	fi
	local g=$out/lib/gcc12 c22=build/clang22-sm90/lib c16=build/clang16-sm90/lib snap="--size 10 --reps 1 --warmup 0"
	run_prog gcc12-lambda-map fail $g 60 $out/lambda-map.gcc12
	run_prog gcc12-lambda-map@clang22 pass $c22 60 $out/lambda-map.clang22
	run_prog gcc12-kkomp-team-ice@HEAD pass $g 120 $out/snap_ui.kk-omp-b.gcc12 $snap
	run_prog ompx-bare-generic-mode fail $c22 60 $out/minimal.generic-mode
	run_prog ompx-bare-generic-mode@cuda pass $c22 60 $out/minimal.cuda-mode
	run_prog ompx-bare-generic-mode@clang19 fail build/clang19-sm90/lib 60 $out/minimal-clang19.generic-mode
	run_prog ompx-bare-generic-mode@clang19-cuda pass build/clang19-sm90/lib 60 $out/minimal-clang19.cuda-mode
	run_prog ompx-bare-generic-mode@snap_yi fail $c22 120 $out/snap_yi.direct-ompx.generic-mode $snap
	run_prog ompx-bare-generic-mode@snap_yi-cuda pass $c22 120 $out/snap_yi.direct-ompx.cuda-mode $snap
	run_prog scratch-rebase-out-of-window fail $c22 60 $out/rebase-shifted/repro
	run_prog scratch-rebase-out-of-window@slice pass $c22 60 $out/rebase-slice/repro
	if [ -x $out/tune-register-limit ]; then
		say tune-register-limit "$(timeout 60 $out/tune-register-limit 2>&1 | tail -1 | sed 's/^tune-register-limit: //')"
	else say tune-register-limit "SKIP: $out/tune-register-limit not built"; fi
	run_prog llvm16-narrow-barrier fail $c16 20 $out/barrier.clang16 4
	run_prog llvm16-narrow-barrier@32 pass $c16 20 $out/barrier.clang16 32
}

case $mode in
build) build ;;
run) run ;;
*) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
