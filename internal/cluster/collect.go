package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/work"
)

// Summary is cluster.json, written by collect next to the merged results.
type Summary struct {
	Planned   int          `json:"planned"`
	Measured  int          `json:"measured"`
	Verified  int          `json:"verified"`
	Missing   []work.Item  `json:"missing"`
	Shards    []ShardInfo  `json:"shards"`
	Slurm     *Status      `json:"slurm,omitempty"`
	Agreement []Agreement  `json:"gpu_agreement,omitempty"`
	Subs      []Submission `json:"submissions"`
}

// ShardInfo is one worker's folder as collect found it.
type ShardInfo struct {
	ID    string     `json:"id"`
	Shard work.Shard `json:"shard"`
	Done  int        `json:"done"`
	Kept  int        `json:"kept"` // kernel records kept (finished items; an interrupted item's record is dropped)
}

// Collect merges the shards of a campaign into the campaign folder: every
// finished item's record once (from the shard that finished it), each
// carrying its shard's provenance; the plan's build.csv; run.json naming
// every shard. It writes cluster.json and prints progress, failed tasks,
// missing items and the GPU agreement check.
// A tuning campaign (Slurm's tune) is joined by CollectTune instead, with no
// Summary.
func Collect(ctx context.Context, dir string, log io.Writer) (*Summary, error) {
	if IsTuning(dir) {
		_, err := CollectTune(ctx, dir, log)
		return nil, err
	}
	c := Campaign{Dir: dir}
	plan, err := work.ReadItems(c.PlanFile())
	if err != nil {
		return nil, fmt.Errorf("%s is not a campaign (no plan): %w", dir, err)
	}
	subs, err := c.Submissions()
	if err != nil {
		return nil, err
	}
	sum := &Summary{Planned: len(plan), Subs: subs}
	for _, s := range subs {
		if s.Scheduler == "slurm" {
			st, err := c.PrintStatus(ctx, log)
			if err != nil {
				return nil, err
			}
			sum.Slurm = &st
			break
		}
	}
	ids, err := c.Shards()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return sum, fmt.Errorf("%s: no shard has results yet", dir)
	}
	done, err := c.Done()
	if err != nil {
		return nil, err
	}
	stage := c.path("staging")
	if err := os.RemoveAll(stage); err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	var staged []string
	var agreeRecs []results.Record
	for _, id := range ids {
		info, recs, err := stageShard(c, id, done, filepath.Join(stage, id))
		if err != nil {
			return nil, err
		}
		sum.Shards = append(sum.Shards, info)
		staged = append(staged, filepath.Join(stage, id))
		agreeRecs = append(agreeRecs, recs...)
	}
	// The plan comes last: its build.csv (every selected cell, from the
	// machine that planned) is the campaign's; it measured nothing.
	staged = append(staged, c.path("plan"))
	if err := results.Merge(dir, staged); err != nil {
		return nil, err
	}
	recs, err := results.ReadJSONL(dir)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			sum.Measured++
			if r.Verified {
				sum.Verified++
			}
		}
	}
	sum.Missing = Missing(plan, done)
	sum.Agreement = Agree(agreeRecs)
	if err := results.WriteJSON(dir, results.CampaignFile, sum); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "collect: %d shards: %d of %d items measured (%d verified, %d not), %d missing; into %s\n",
		len(ids), sum.Measured, sum.Planned, sum.Verified, sum.Measured-sum.Verified, len(sum.Missing), dir)
	for i, it := range sum.Missing {
		if i == 10 {
			fmt.Fprintf(log, "  ... (all in %s)\n", filepath.Join(dir, results.CampaignFile))
			break
		}
		fmt.Fprintf(log, "  missing %s size %d\n", it.Cell, it.Size)
	}
	if len(sum.Missing) > 0 {
		fmt.Fprintf(log, "  resubmit what is missing: the same run command with -out %s\n", dir)
	}
	PrintAgreement(log, sum.Agreement)
	return sum, nil
}

// stageShard copies a shard into dst with its provenance on every record,
// keeping the kernel records of the items this shard finished (and its copy
// records). It also returns the shard's GPU-agreement records (agree/).
func stageShard(c Campaign, id string, done map[string]string, dst string) (ShardInfo, []results.Record, error) {
	src := c.ShardDir(id)
	info := ShardInfo{ID: id}
	sh, err := work.ReadShard(src)
	if err != nil && !os.IsNotExist(err) {
		return info, nil, err
	}
	info.Shard = sh
	finished, err := work.Done(src)
	if err != nil {
		return info, nil, err
	}
	info.Done = len(finished)
	mine := map[string]bool{}
	for _, it := range finished {
		if done[it.Key()] == id {
			mine[it.Key()] = true
		}
	}
	annotate := func(r *results.Record) {
		r.Shard, r.Node = id, sh.Node
		r.SlurmJobID, r.SlurmTaskID, r.Worker = sh.SlurmJobID, sh.SlurmTaskID, sh.Worker
		if sh.GPUUUID != "" {
			r.GPUUUID = sh.GPUUUID
		}
	}
	recs, err := results.ReadJSONL(src)
	if err != nil && !os.IsNotExist(err) {
		return info, nil, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return info, nil, err
	}
	var keep []results.Record
	for _, r := range recs {
		switch {
		case r.Kind == results.KindKernel:
			if !mine[r.Unit().String()] {
				continue
			}
			info.Kept++
		case r.IsRoofline():
		default:
			continue
		}
		annotate(&r)
		keep = append(keep, r)
	}
	if err := results.WriteRecords(dst, keep); err != nil {
		return info, nil, err
	}
	for _, f := range []string{results.RunFile, results.BuildFile} {
		if b, err := os.ReadFile(filepath.Join(src, f)); err == nil {
			if err := fsutil.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
				return info, nil, err
			}
		}
	}
	if err := results.CopyTree(filepath.Join(src, results.LogsDir), filepath.Join(dst, results.LogsDir)); err != nil {
		return info, nil, err
	}
	var agree []results.Record
	if a, err := results.ReadJSONL(filepath.Join(src, "agree")); err == nil {
		for _, r := range a {
			if r.Kind == results.KindKernel {
				annotate(&r)
				agree = append(agree, r)
			}
		}
	}
	return info, agree, nil
}
