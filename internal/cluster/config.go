// Package cluster hands the run stage to a Slurm cluster (one job array whose
// tasks each measure a chunk of the (cell, size) work items) or to every GPU
// of a node (one worker per GPU, items handed out from a shared queue), and
// collects the workers' results folders ("shards") into one results folder
// whose every record says who measured it. Slurm's own commands (sbatch,
// squeue, sacct) schedule and watch; see docs/cluster.md.
package cluster

import (
	"bytes"
	"fmt"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Config is the cluster file (cluster.yaml; cluster.example.yaml is the
// commented template users copy).
type Config struct {
	Partition   string            `yaml:"partition"`
	Account     string            `yaml:"account"`
	QOS         string            `yaml:"qos"`
	Time        string            `yaml:"time"`          // per task, Slurm's syntax (e.g. 01:00:00)
	Tasks       int               `yaml:"tasks"`         // at most this many array tasks (chunks) per submission
	MaxRunning  int               `yaml:"max_running"`   // array throttle: --array=0-N%max_running
	CPUsPerTask int               `yaml:"cpus_per_task"` //
	GPUsPerTask int               `yaml:"gpus_per_task"` // > 0: GPU cells are planned and the tasks run them
	Mem         string            `yaml:"mem"`           // e.g. 16G
	Exclusive   bool              `yaml:"exclusive"`     // a node to itself per task (timings share nothing)
	Sbatch      []string          `yaml:"sbatch"`        // more sbatch options, one per entry
	Modules     []string          `yaml:"modules"`       // module load lines in the job
	Env         map[string]string `yaml:"env"`           // exported in the job
	Setup       []string          `yaml:"setup"`         // shell lines run before the task
	Portmatrix  string            `yaml:"portmatrix"`    // the static CLI the tasks run (default: see docs/cluster.md)
}

// DefaultFile is the cluster file read when none is named.
const DefaultFile = "cluster.yaml"

var slurmTime = regexp.MustCompile(`^(\d+-)?\d+(:\d+){0,2}$|^(\d+-\d+)$|^$`)

// LoadConfig reads and checks a cluster file; unknown keys are errors with
// their line.
func LoadConfig(file string) (*Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w (copy cluster.example.yaml to %s and edit it)", err, file)
	}
	return ParseConfig(file, b)
}

// ParseConfig parses the cluster file's text.
func ParseConfig(file string, b []byte) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var errs []string
	if c.Tasks == 0 {
		c.Tasks = 16
	}
	if c.CPUsPerTask == 0 {
		c.CPUsPerTask = 1
	}
	if c.Tasks < 0 || c.MaxRunning < 0 || c.CPUsPerTask < 0 || c.GPUsPerTask < 0 {
		errs = append(errs, "tasks, max_running, cpus_per_task and gpus_per_task must not be negative")
	}
	if !slurmTime.MatchString(c.Time) {
		errs = append(errs, fmt.Sprintf("time %q is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS)", c.Time))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", file, joinLines(errs))
	}
	return c, nil
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, l := range s {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(l)
	}
	return b.String()
}
