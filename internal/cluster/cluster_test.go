package cluster

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/work"
)

func TestExampleConfigParses(t *testing.T) {
	c, err := LoadConfig("../../cluster.example.yaml")
	require.NoError(t, err)
	assert.Equal(t, "gpu", c.Partition)
	assert.Equal(t, 1, c.GPUsPerTask)
	assert.NotEmpty(t, c.Modules)
}

func TestConfigErrors(t *testing.T) {
	_, err := ParseConfig("c.yaml", []byte("partition: x\ngpus: 2\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.yaml: yaml: unmarshal errors:\n  line 2: field gpus not found")
	_, err = ParseConfig("c.yaml", []byte("time: 1 hour\n"))
	assert.EqualError(t, err, `c.yaml: time "1 hour" is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS)`)
	c, err := ParseConfig("c.yaml", []byte("time: 1-02:00:00\n"))
	require.NoError(t, err)
	assert.Equal(t, 16, c.Tasks)
	assert.Equal(t, 1, c.CPUsPerTask)
}

func items(n int) []work.Item {
	var out []work.Item
	for i := 0; i < n; i++ {
		out = append(out, work.Item{Cell: fmt.Sprintf("k.v%d.tc", i/2), Size: int64(1 + i%2)})
	}
	return out
}

func TestChunksCoverEveryItemOnce(t *testing.T) {
	for _, tc := range []struct{ n, k, chunks int }{{10, 3, 3}, {2, 16, 2}, {16, 16, 16}, {1, 0, 1}} {
		ch := Chunks(items(tc.n), tc.k)
		require.Len(t, ch, tc.chunks)
		seen := map[string]int{}
		for _, c := range ch {
			assert.NotEmpty(t, c)
			for _, it := range c {
				seen[it.Key()]++
			}
		}
		assert.Len(t, seen, tc.n)
	}
}

func TestMissing(t *testing.T) {
	plan := items(4)
	m := Missing(plan, map[string]string{plan[1].Key(): "7_0", plan[3].Key(): "7_1"})
	assert.Equal(t, []work.Item{plan[0], plan[2]}, m)
}

func TestParseTasks(t *testing.T) {
	into := map[int]Task{}
	parseTasks("12_0|COMPLETED|0:0|ci1|00:00:02\n12_1|CANCELLED by 0|0:15|ci1|00:00:01\n12_[2-3,5%2]|PENDING|0:0|None assigned|00:00:00\n", into)
	parseTasks("12_1|CANCELLED|ci1|0:01\n12_4|RUNNING|ci1|0:03\n", into)
	assert.Equal(t, Task{State: "COMPLETED", ExitCode: "0:0", Node: "ci1", Elapsed: "00:00:02"}, into[0])
	assert.Equal(t, Task{State: "CANCELLED", ExitCode: "0:15", Node: "ci1", Elapsed: "0:01"}, into[1])
	for _, i := range []int{2, 3, 5} {
		assert.Equal(t, "PENDING", into[i].State)
		assert.Empty(t, into[i].Node)
	}
	assert.Equal(t, "RUNNING", into[4].State)
	st := Status{Tasks: []Task{{JobID: "12", Task: 0, State: "COMPLETED"}, {JobID: "12", Task: 1, State: "CANCELLED"},
		{JobID: "12", Task: 2, State: "PENDING"}, {JobID: "12", Task: 3, State: "UNKNOWN"}}}
	assert.Equal(t, []string{"12_2"}, st.Active())
	require.Len(t, st.Failed(), 2)
	assert.Equal(t, 1, st.Failed()[0].Task)
	assert.Equal(t, []int{0, 1, 2, 3, 7}, taskRange("[0-3,7%2]"))
}

func TestJobScript(t *testing.T) {
	cc, err := ParseConfig("c.yaml", []byte(`partition: gpu
account: proj
time: "01:00:00"
tasks: 8
max_running: 2
gpus_per_task: 1
cpus_per_task: 8
exclusive: true
sbatch: ["--constraint=h200"]
modules: [cuda/12.4]
env: {OMP_PROC_BIND: "true", B: "x y"}
setup: ["ulimit -s unlimited"]
`))
	require.NoError(t, err)
	s := JobScript(cc, Campaign{Dir: "/r/c"}, 2, 5, "/bin/portmatrix", []string{"-root", "/repo", "-gpu"})
	for _, want := range []string{
		"#SBATCH --array=0-4%2\n", "#SBATCH --output=/r/c/cluster/logs/%A_%a.out\n", "#SBATCH --partition=gpu\n",
		"#SBATCH --account=proj\n", "#SBATCH --time=01:00:00\n", "#SBATCH --gpus-per-task=1\n",
		"#SBATCH --cpus-per-task=8\n", "#SBATCH --exclusive\n", "#SBATCH --constraint=h200\n", "module load cuda/12.4\n",
		"export B='x y'\nexport OMP_PROC_BIND=true\n", "ulimit -s unlimited\n",
		`exec /bin/portmatrix -root /repo -gpu -work /r/c/cluster/2/work/"$SLURM_ARRAY_TASK_ID".json -out /r/c/cluster/shards/"$SLURM_ARRAY_JOB_ID"_"$SLURM_ARRAY_TASK_ID" run` + "\n",
	} {
		assert.Contains(t, s, want)
	}
}

func rec(cell string, size int64, uuid string, median, min, max float64) results.Record {
	return results.Record{Kind: "kernel", Cell: cell, Size: size, Verified: true, GPUUUID: uuid,
		MedianS: median, MinS: min, TimesS: []float64{min, median, max}}
}

func TestAgreement(t *testing.T) {
	recs := []results.Record{
		rec("a.v.tc", 10, "GPU-1", 1.00, 0.95, 1.10), rec("a.v.tc", 10, "GPU-2", 1.05, 0.98, 1.12),
		rec("b.v.tc", 10, "GPU-1", 1.00, 0.99, 1.01), rec("b.v.tc", 10, "GPU-2", 1.30, 1.29, 1.31),
		rec("c.v.tc", 10, "GPU-1", 1.00, 0.99, 1.01), // one GPU only: nothing to compare
	}
	as := Agree(recs)
	require.Len(t, as, 2)
	assert.True(t, as[0].Agree)
	assert.False(t, as[1].Agree)
	assert.InDelta(t, 1.3, as[1].Ratio, 1e-9)
	var b strings.Builder
	PrintAgreement(&b, as)
	assert.Contains(t, b.String(), "gpu agreement: 2 items measured on every GPU, 1 disagree\n  DISAGREE b.v.tc size 10: GPU-1 1 s [0.99, 1.01]; GPU-2 1.3 s [1.29, 1.31]")
}

func TestAgreementItems(t *testing.T) {
	plan := []work.Item{{Cell: "a.x.gcc", Size: 1}, {Cell: "a.x.gcc", Size: 9}, {Cell: "b.x.gcc", Size: 99},
		{Cell: "a.x.nvcc", Size: 5}}
	assert.Equal(t, []work.Item{{Cell: "a.x.gcc", Size: 9}, {Cell: "a.x.nvcc", Size: 5}}, AgreementItems(plan))
}

// Workers claiming from one queue at once get every item exactly once.
func TestQueueHandsOutEachItemOnce(t *testing.T) {
	q := work.Queue(t.TempDir())
	require.NoError(t, q.Fill(items(200)))
	var mu sync.Mutex
	got := map[string]int{}
	per := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			for {
				it, ok, err := q.Claim(name)
				if !assert.NoError(t, err) || !ok {
					return
				}
				mu.Lock()
				got[it.Key()]++
				per[name]++
				mu.Unlock()
			}
		}(fmt.Sprintf("w%d", w))
	}
	wg.Wait()
	assert.Len(t, got, 200)
	for k, n := range got {
		assert.Equal(t, 1, n, k)
	}
	left, _ := os.ReadDir(filepath.Join(string(q), "todo"))
	assert.Empty(t, left)
}

func TestShardOrder(t *testing.T) {
	c := Campaign{Dir: t.TempDir()}
	for _, id := range []string{"10_2", "9_1", "10_10", "gpu1-1", "gpu0-2", "gpu0-1"} {
		require.NoError(t, os.MkdirAll(c.ShardDir(id), 0o755))
	}
	ids, err := c.Shards()
	require.NoError(t, err)
	assert.Equal(t, []string{"gpu0-1", "gpu1-1", "gpu0-2", "9_1", "10_2", "10_10"}, ids)
}

// A CLI -flush-l2 reaches every worker: Slurm's job script and the GPU
// workers run the CLI with the arguments workerArgs derives from the knobs.
func TestCLIFlushL2ReachesTheWorkers(t *testing.T) {
	var cfg config.Config
	fs := flag.NewFlagSet("portmatrix", flag.ContinueOnError)
	config.Flags(fs, &cfg)
	require.NoError(t, fs.Parse([]string{"-flush-l2", "on", "-scheduler", "slurm", "-out", "results/c"}))
	cfg.Defaults()
	args, err := workerArgs(cfg, true)
	require.NoError(t, err)
	assert.Contains(t, args, "-flush-l2=on")
	assert.Equal(t, "-scheduler=", args[0])
	assert.NotContains(t, strings.Join(args, " "), "-out")
	script := JobScript(&Config{Tasks: 1}, Campaign{Dir: "results/c"}, 1, 1, "portmatrix", args)
	assert.Contains(t, script, " -flush-l2=on ")
}
